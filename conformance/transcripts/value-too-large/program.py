return 'x' * 5000
