x = 1
raise ValueError('no')
