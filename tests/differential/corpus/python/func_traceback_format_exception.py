import sys
import traceback

try:
    {}["k"]
except KeyError as exc:
    lines = traceback.format_exception(exc)
    print("".join(lines), end="")
    print(traceback.format_exception_only(type(exc), exc))
    print(sys.exc_info()[0].__name__)
