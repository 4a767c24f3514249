import os

os.mkdir("d")
os.mkdir("d")
