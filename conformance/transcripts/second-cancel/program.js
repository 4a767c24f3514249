try {
  await hang()
} catch (e) {
  await hang()
}
