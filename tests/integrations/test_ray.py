"""tether.integrations.ray on a real local Ray cluster: the cases in
ray_cases.py, run by a pytest of their own (a Ray driver keeps descriptors
open after ray.shutdown(), and this process's leak check counts them). They
get a temporary directory of their own: a worker killed mid-batch cannot
remove its runs' work directories, and nothing else will."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed (pip install tether[ray])")

ROOT = Path(__file__).resolve().parents[2]


def test_the_ray_cases_pass_on_a_local_cluster() -> None:
    temp = tempfile.mkdtemp(prefix="ray-cases-")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA",
             str(Path(__file__).with_name("ray_cases.py"))], cwd=ROOT,
            env={**os.environ, "TMPDIR": temp}, capture_output=True, text=True, timeout=600,
            check=False)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1]
