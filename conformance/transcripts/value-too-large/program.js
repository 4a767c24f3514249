return 'x'.repeat(5000)
