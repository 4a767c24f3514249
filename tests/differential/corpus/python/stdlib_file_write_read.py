from pathlib import Path

path = Path("notes.txt")
path.write_text("first line\nsecond line\n")
with path.open("a") as f:
    f.write("third line\n")
print(path.read_text().splitlines())
print(path.exists(), path.suffix, path.stem, path.stat().st_size)
path.unlink()
print(path.exists())
