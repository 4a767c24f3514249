raise ValueError('x' * 100000)
