import os

os.rmdir("no-such-directory")
