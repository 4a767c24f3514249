import os

os.mkdir("folder")
open("folder").read()
