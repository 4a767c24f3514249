console.log('leaving')
process.exit(0)
console.log('not reached')
