import sys
print('a')
print('b', file=sys.stderr)
print('c')
