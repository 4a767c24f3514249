import argparse

parser = argparse.ArgumentParser(prog="tool")
parser.add_argument("--n", type=int, required=True)
parser.parse_args(["--n", "abc"])
