import sys

if not []:
    sys.exit("error: no input files given")
