value = 0
for _ in range(32):
    value = [value]
value = await echo(value)
deeper = [value]
try:
    await echo(deeper)
except TypeError:
    print('TypeError at the call')
return deeper
