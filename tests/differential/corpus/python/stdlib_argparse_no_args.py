import argparse

parser = argparse.ArgumentParser(description="Process some integers.")
parser.add_argument("--limit", type=int, default=10)
args = parser.parse_args()
print("limit is", args.limit)
