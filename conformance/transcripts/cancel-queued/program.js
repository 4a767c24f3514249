const first = hang()
first.catch(() => {})
try {
  await echo(1)
} catch (e) {
  if (e instanceof Cancelled) console.log('queued call cancelled')
  throw e
}
