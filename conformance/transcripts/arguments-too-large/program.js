try {
  await echo('x'.repeat(5000))
} catch (e) {
  return e instanceof RangeError && e.message.includes('value_bytes')
}
