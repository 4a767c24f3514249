import warnings


def old_api():
    warnings.warn("old_api is deprecated; use new_api", DeprecationWarning, stacklevel=2)
    return 1


warnings.simplefilter("always")
old_api()
warnings.warn("plain user warning")
print("continues after warnings")
