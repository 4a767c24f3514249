print('x' * 70000)
