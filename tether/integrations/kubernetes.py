"""A Kubernetes exec as a byte stream for a guest's stdio
(``pip install tether[kubernetes]``).

The API server's exec endpoint speaks WebSocket with a channel byte in
front of every binary message (subprotocols ``v5.channel.k8s.io`` and
``v4.channel.k8s.io``): 0 stdin, 1 stdout, 2 stderr, 3 the exec's status
(JSON, once, at the end), 4 terminal resize. v5 adds closing a channel:
the two bytes ``ff 00`` close stdin. :class:`ExecStream` sends frames on
channel 0 and hands back channel 1, so a guest started with
``python -m tether.guest --stdio`` in the pod talks to the host as if it were
a local child (spec §3.1); stderr is kept (bounded) as the guest's raw
output, and the status gives its exit code.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

__all__ = ["CHANNEL_PROTOCOLS", "ExecError", "ExecStream", "exec_url"]

#: Best first: v5 can close stdin; v4 cannot.
CHANNEL_PROTOCOLS = (Subprotocol("v5.channel.k8s.io"), Subprotocol("v4.channel.k8s.io"))
STDIN, STDOUT, STDERR, STATUS, RESIZE = range(5)
CLOSE = 255  # v5: b"\xff" + channel closes that channel
#: What the WebSocket accepts in one message: a frame ceiling and then some.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024 + 1024


class ExecError(Exception):
    """The exec could not start, or its peer broke the channel protocol."""


def exec_url(server: str, namespace: str, pod: str, command: Sequence[str], *,
             container: str | None = None) -> str:
    """The exec endpoint for ``command`` in ``pod`` (stdin, stdout and
    stderr attached, no terminal). ``server``: the API server's https URL."""
    query: list[tuple[str, str]] = [("command", part) for part in command]
    query += [("stdin", "true"), ("stdout", "true"), ("stderr", "true"), ("tty", "false")]
    if container is not None:
        query.append(("container", container))
    base = server.rstrip("/").replace("https://", "wss://", 1).replace("http://", "ws://", 1)
    return (f"{base}/api/v1/namespaces/{quote(namespace, safe='')}/pods/"
            f"{quote(pod, safe='')}/exec?{urlencode(query)}")


def exit_code(status: Mapping[str, Any]) -> int:
    """The exit status a channel-3 status object reports (1 when it fails
    without saying which)."""
    if status.get("status") == "Success":
        return 0
    for cause in (status.get("details") or {}).get("causes") or ():
        if cause.get("reason") == "ExitCode":
            try:
                return int(cause.get("message", ""))
            except ValueError:
                break
    return 1


class ExecStream:
    """One exec's channels as a stream: :meth:`send` writes the guest's
    stdin, :meth:`receive` reads its stdout (``b""`` at the end). ``stderr``
    holds the first ``stderr_bytes`` of its stderr; ``status`` the final
    status object, ``exit_code`` what it says."""

    def __init__(self, connection: ClientConnection, stderr_bytes: int = 65536) -> None:
        self._connection = connection
        self._stderr_bytes = stderr_bytes
        self.protocol = connection.subprotocol
        self.stderr = bytearray()
        self.status: dict[str, Any] | None = None
        self._ended = False

    @classmethod
    async def open(cls, url: str, *, headers: Mapping[str, str] | None = None,
                   ssl_context: ssl.SSLContext | None = None,
                   stderr_bytes: int = 65536) -> ExecStream:
        """Connect to an exec endpoint (:func:`exec_url`); ``headers`` carry
        the credentials (``Authorization: Bearer ...``)."""
        try:
            connection = await connect(
                url, subprotocols=list(CHANNEL_PROTOCOLS), additional_headers=dict(headers or {}),
                ssl=ssl_context if url.startswith("wss://") else None,
                max_size=MAX_MESSAGE_BYTES, compression=None)
        except (OSError, ConnectionClosed) as exc:
            raise ExecError(f"the exec did not start: {exc}") from exc
        except Exception as exc:  # the handshake refused (InvalidStatus, InvalidHandshake)
            raise ExecError(f"the exec did not start: {exc}") from exc
        if connection.subprotocol not in CHANNEL_PROTOCOLS:
            await connection.close()
            raise ExecError(f"the server chose no channel protocol ({connection.subprotocol!r})")
        return cls(connection, stderr_bytes)

    async def send(self, data: bytes) -> None:
        """Write ``data`` to the command's stdin (channel 0)."""
        await self._connection.send(bytes([STDIN]) + data)

    async def close_stdin(self) -> None:
        """EOF on the command's stdin: a v5 channel close; v4 has none, so
        the stream is left open until :meth:`close`."""
        if self.protocol == CHANNEL_PROTOCOLS[0]:
            await self._connection.send(bytes([CLOSE, STDIN]))

    async def resize(self, width: int, height: int) -> None:
        """Channel 4 (only a command run with a terminal heeds it)."""
        await self._connection.send(bytes([RESIZE]) + json.dumps(
            {"Width": width, "Height": height}).encode())

    async def receive(self) -> bytes:
        """The next bytes of stdout; ``b""`` once the exec has ended (its
        status came, or the connection closed)."""
        while not self._ended:
            try:
                message = await self._connection.recv()
            except ConnectionClosed:
                self._ended = True
                break
            if isinstance(message, str) or not message:
                raise ExecError("a text or empty message on an exec channel")
            channel, data = message[0], message[1:]
            if channel == STDOUT and data:
                return data
            if channel == STDERR:
                self.stderr += data[: max(0, self._stderr_bytes - len(self.stderr))]
            elif channel == STATUS:
                try:
                    status = json.loads(data)
                except ValueError as exc:
                    raise ExecError("the exec's status is not JSON") from exc
                self.status = status if isinstance(status, dict) else {"status": "Failure"}
                self._ended = True
            elif channel not in (STDOUT, CLOSE):
                raise ExecError(f"a message on unknown exec channel {channel}")
        return b""

    @property
    def exit_code(self) -> int | None:
        """The command's exit status, once its status came."""
        return None if self.status is None else exit_code(self.status)

    async def close(self) -> None:
        """End the exec: closing the WebSocket ends the command's stdio (the
        API server then stops streaming; a pod is deleted by its owner)."""
        await self._connection.close()
