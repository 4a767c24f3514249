from pathlib import Path

base = Path("project")
(base / "src").mkdir(parents=True)
(base / "src" / "main.py").write_text("print('hi')\n")
(base / "README.md").write_text("# Project\n")
for p in sorted(base.rglob("*")):
    print(p, "dir" if p.is_dir() else p.stat().st_size)
print(sorted(x.name for x in base.glob("*.md")))
