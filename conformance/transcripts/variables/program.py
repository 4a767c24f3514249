import math
total = await add(sum(rows), 0)
_scratch = 1
when = object()
big = 'x' * 2000
def helper():
    pass
return f'{total} {unit}'
