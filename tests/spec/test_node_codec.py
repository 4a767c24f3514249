"""The JavaScript codec (guest/node) passes the same test vectors."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

NODE_GUEST = Path(__file__).resolve().parents[2] / "guest" / "node"


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_node_codec_passes_the_vectors() -> None:
    done = subprocess.run(["node", "--test", "test/"], cwd=NODE_GUEST, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
