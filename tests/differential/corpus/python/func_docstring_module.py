"""Inventory report tool."""

import sys

print(__doc__)
print(sys.modules[__name__].__doc__)
