add(1, 2)
await new Promise((r) => setTimeout(r, 100))
// the call is still in flight
throw new TypeError('ended')
