import sys
print('leaving')
sys.exit(0)
print('not reached')
