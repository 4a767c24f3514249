const a = echo(1)
const b = add(1, 2)
await new Promise((r) => setTimeout(r, 100))
console.log('waiting')
return [await a, await b]
