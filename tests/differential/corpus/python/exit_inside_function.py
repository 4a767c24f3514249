import sys


def main():
    print("main runs")
    return 7


if __name__ == "__main__":
    sys.exit(main())
