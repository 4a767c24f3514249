throw new Error('x'.repeat(100000))
