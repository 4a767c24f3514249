"""Importing tether never imports a framework; each integration imports its
own when it is itself imported."""

from __future__ import annotations

import subprocess
import sys

FRAMEWORKS = ["pydantic_ai", "agents", "anthropic", "langchain", "langchain_core", "langgraph",
              "smolagents", "mcp"]


def test_tether_imports_no_framework() -> None:
    code = ("import sys, tether, tether.integrations\n"
            "tether.Runtime, tether.SyncRuntime\n"
            f"print([m for m in {FRAMEWORKS!r} if m in sys.modules])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.strip() == "[]"
