console.log('x'.repeat(70000))
