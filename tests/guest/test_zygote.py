"""The fork server's own descriptors (guest side)."""

from __future__ import annotations

import subprocess
import sys

#: In a process of its own: fd 3 is the control socket, fds up to 12 are
#: held (as the template's Landlock rule descriptors are) before the
#: template moves its control socket off fd 3.
HOLDS_ITS_DESCRIPTORS = """
import os, socket, sys
from tether.guest.python import confine, zygote
ours, theirs = socket.socketpair()
os.dup2(theirs.fileno(), 3)
held = {}
while (fd := os.open("/dev/null", os.O_PATH)) <= 12:
    held[fd] = os.fstat(fd).st_ino
os.close(fd)
template = zygote._Template(False, confine.Confinement())
assert all(os.fstat(fd).st_ino == ino for fd, ino in held.items()), "a held descriptor was replaced"
assert template.control.fileno() not in held
assert os.get_inheritable(template.control.fileno()) is False
print("ok")
"""


def test_the_template_moves_its_control_socket_onto_no_descriptor_it_holds() -> None:
    """A guest's Landlock rules are descriptors the template opened before it
    moved its control socket: replacing one would break every guest it forks."""
    done = subprocess.run([sys.executable, "-c", HOLDS_ITS_DESCRIPTORS],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip() == "ok", done.stderr
