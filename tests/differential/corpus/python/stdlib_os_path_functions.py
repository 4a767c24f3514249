import os.path

p = os.path.join("data", "raw", "file.tar.gz")
print(p, os.path.basename(p), os.path.dirname(p), os.path.splitext(p))
print(os.path.normpath("a/b/../c/./d"), os.path.isabs("/x"), os.path.split("/a/b"))
print(os.sep, os.path.commonprefix(["abc", "abd"]))
