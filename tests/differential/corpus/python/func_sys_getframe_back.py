import sys


def who_called():
    return sys._getframe(1).f_code.co_name


def api():
    return who_called()


print(api(), who_called())
print(sys._getframe().f_code.co_name, sys._getframe().f_back)
