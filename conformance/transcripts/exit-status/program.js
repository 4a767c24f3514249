console.log('failing')
process.exit(3)
