delete globalThis.JSON
delete globalThis.Math
Array.prototype.push = () => { throw new Error('push') }
Map.prototype.get = () => { throw new Error('get') }
console.log('still printing')
return [await add(1, 2), { a: [1] }]
