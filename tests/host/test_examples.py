"""The examples run as their readers run them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_three_step_analysis_runs_with_the_standard_library() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLES / "analysis.py")], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "north leads with 2422.50 (44% of revenue)"
    assert "carried between steps: ['best', 'by_region', 'row', 'rows', 'share', 'totals']" \
        in done.stdout
