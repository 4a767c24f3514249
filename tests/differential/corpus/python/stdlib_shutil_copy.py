import shutil
from pathlib import Path

Path("a").mkdir()
Path("a/f.txt").write_text("content")
shutil.copytree("a", "b")
shutil.copy("a/f.txt", "b/g.txt")
print(sorted(p.name for p in Path("b").iterdir()))
shutil.rmtree("a")
print(Path("a").exists(), Path("b/g.txt").read_text())
