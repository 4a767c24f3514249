console.log('a')
console.error('b')
console.log('c')
