import sys
print("checking")
sys.exit("no rows found")
