try {
  await opaque()
} catch (e) {
  return [e.code, e.binding]
}
