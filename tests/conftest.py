import os
import shutil
import tempfile

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=200, deadline=None)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

#: A temporary directory of this test session's own, for it and the processes
#: it starts (TMPDIR): the leak check counts only what this session left, even
#: while other suites or programs use the machine's temporary directory.
#: Under pytest-xdist each worker has its own, inside the controller's. Short
#: names: a Ray session's socket paths under it must fit AF_UNIX's 107 bytes.
_SESSION_TMP = tempfile.mkdtemp(prefix="w" if "PYTEST_XDIST_WORKER" in os.environ
                                else "tether-tests-")
os.environ["TMPDIR"] = _SESSION_TMP
tempfile.tempdir = _SESSION_TMP
# Node startup snapshots are built into this test run's own cache, not the
# user's (host/guests/node_snapshot.py reads it when first imported); xdist's
# workers share the controller's, as hosts share a user's.
if "PYTEST_XDIST_WORKER" not in os.environ:
    os.environ["XDG_CACHE_HOME"] = os.path.join(_SESSION_TMP, "cache")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(_SESSION_TMP, ignore_errors=True)
