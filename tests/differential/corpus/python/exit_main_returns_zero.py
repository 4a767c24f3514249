import sys


def main() -> int:
    print("all good")
    return 0


sys.exit(main())
