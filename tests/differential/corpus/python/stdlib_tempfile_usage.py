import os
import tempfile

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "x.txt")
    with open(path, "w") as f:
        f.write("data")
    print(os.listdir(tmp), os.path.getsize(path))
print(os.path.exists(path))
