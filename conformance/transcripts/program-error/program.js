const x = 1
throw new Error('no')
