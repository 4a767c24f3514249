process.on('exit', (code) => console.log('exit', code))
process.exitCode = 2
return 'ignored'
