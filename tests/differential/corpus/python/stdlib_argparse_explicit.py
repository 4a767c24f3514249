import argparse

parser = argparse.ArgumentParser(prog="tool", description="Demo tool")
parser.add_argument("input")
parser.add_argument("--count", type=int, default=1)
parser.add_argument("-v", "--verbose", action="store_true")
args = parser.parse_args(["data.csv", "--count", "3", "-v"])
print(args)
print(vars(args))
