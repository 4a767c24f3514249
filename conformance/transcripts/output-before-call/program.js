process.stdout.write('x')
await add(1, 1)
console.log('y')
