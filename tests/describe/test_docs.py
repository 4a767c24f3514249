"""The examples on the describing-bindings page type-check as users write them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "bindings.md"


def test_the_page_examples_pass_mypy_strict(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    assert len(blocks) >= 4
    files = []
    for i, block in enumerate(blocks):
        files.append(tmp_path / f"example_{i}.py")
        files[-1].write_text(block)
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir",
                           str(tmp_path / "cache"), *map(str, files)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout
