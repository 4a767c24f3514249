try {
  await hang()
} catch (e) {
  return 'swallowed'
}
