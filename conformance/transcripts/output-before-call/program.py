print('x', end='')
await add(1, 1)
print('y')
