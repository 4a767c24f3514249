"""The wheel carries the Node guest's npm packages, installed at build time
from guest/node/package-lock.json (never committed), so that JavaScript and
TypeScript work after ``pip install tether`` with nothing else to run.
Everything else is declared in pyproject.toml."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithNodePackages(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install uses guest/node/node_modules (`make setup`)
        guest = Path(self.build_lib) / "tether" / "guest" / "node"
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("building tether needs npm (Node.js >= 20): the wheel carries the "
                             "Node guest's packages, installed from guest/node/package-lock.json")
        shutil.rmtree(guest / "node_modules", ignore_errors=True)
        subprocess.run([npm, "ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund",
                        "--loglevel=error", "--prefix", str(guest)], check=True)


setup(cmdclass={"build_py": BuildPyWithNodePackages})
