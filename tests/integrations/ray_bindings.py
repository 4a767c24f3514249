"""Bindings the Ray workers import by name in tests/integrations/test_ray.py."""

from __future__ import annotations

import os
import signal


def double(x: int) -> int:
    """2 * x, computed on the worker."""
    return 2 * x


def die() -> None:
    """Kill the Ray worker this binding runs in, mid-batch."""
    os.kill(os.getpid(), signal.SIGKILL)
