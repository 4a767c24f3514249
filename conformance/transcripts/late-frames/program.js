add(1, 2)
await new Promise((r) => setTimeout(r, 100))
return 1
