"""tether.integrations.kubernetes against a TEST DOUBLE of the API server's
exec endpoint: a local WebSocket server, written here, that speaks the
v4/v5.channel.k8s.io subprotocols and runs the command as a local
subprocess (channel 0 to its stdin, 1 and 2 from its stdout and stderr, 3 its
status at exit). It is not Kubernetes; the real cluster is reached only by
the last test, when KUBECONFIG is set."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Sequence
from urllib.parse import parse_qs, urlparse

import pytest

websockets = pytest.importorskip(
    "websockets", reason="websockets is not installed (pip install tether[kubernetes])")

from websockets.asyncio.server import ServerConnection, serve  # noqa: E402
from websockets.typing import Subprotocol  # noqa: E402

from tether.codec import NEED_DATA, Connection, Done, Hello, Role, Run, RunLimits  # noqa: E402
from tether.integrations.kubernetes import (  # noqa: E402
    CHANNEL_PROTOCOLS,
    ExecError,
    ExecStream,
    exec_url,
)


async def _exec_double(connection: ServerConnection) -> None:
    """The test double's exec: run the URL's command, bridge its stdio."""
    assert connection.request is not None
    command = parse_qs(urlparse(connection.request.path).query)["command"]
    if command == ["bad-channel"]:
        await connection.send(b"\x07nonsense")
        return
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    assert process.stdin and process.stdout and process.stderr

    async def pump(stream: asyncio.StreamReader, channel: int) -> None:
        while data := await stream.read(65536):
            await connection.send(bytes([channel]) + data)

    async def feed() -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for message in connection:
                assert isinstance(message, bytes)
                if message == b"\xff\x00":  # v5: close stdin
                    process.stdin.close()  # type: ignore[union-attr]
                elif message[0] == 0:
                    process.stdin.write(message[1:])  # type: ignore[union-attr]
        process.kill()  # the client went away: the exec ends

    feeding = asyncio.create_task(feed())
    await asyncio.gather(pump(process.stdout, 1), pump(process.stderr, 2))
    code = await process.wait()
    status = {"status": "Success"} if code == 0 else {
        "status": "Failure", "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}
    with contextlib.suppress(websockets.ConnectionClosed):
        await connection.send(b"\x03" + json.dumps(status).encode())
        await connection.close()
    feeding.cancel()


@contextlib.asynccontextmanager
async def _api_server(protocols: Sequence[str] = ("v5.channel.k8s.io", "v4.channel.k8s.io")
                      ) -> AsyncIterator[str]:
    async with serve(_exec_double, "127.0.0.1", 0,
                     subprotocols=[Subprotocol(p) for p in protocols] or None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"http://127.0.0.1:{port}"


async def _read_all(stream: ExecStream) -> bytes:
    out = b""
    while data := await asyncio.wait_for(stream.receive(), 20):
        out += data
    return out


def test_the_exec_url_names_the_command_and_the_streams() -> None:
    url = exec_url("https://k8s.example:6443/", "sand box", "pod-1",
                   ["python", "-m", "tether.guest", "--stdio"], container="guest")
    assert url.startswith("wss://k8s.example:6443/api/v1/namespaces/sand%20box/pods/pod-1/exec?")
    query = parse_qs(urlparse(url).query)
    assert query["command"] == ["python", "-m", "tether.guest", "--stdio"]
    assert query["stdin"] == query["stdout"] == query["stderr"] == ["true"]
    assert query["container"] == ["guest"]


def test_stdout_stderr_and_the_exit_status_come_apart() -> None:
    async def go() -> None:
        async with _api_server() as server:
            stream = await ExecStream.open(exec_url(server, "ns", "pod", [
                "sh", "-c", "read line; echo \"got $line\"; echo oops >&2; exit 3"]))
            assert stream.protocol == CHANNEL_PROTOCOLS[0]
            await stream.send(b"hello\n")
            await stream.close_stdin()
            assert await _read_all(stream) == b"got hello\n"
            assert bytes(stream.stderr) == b"oops\n"
            assert stream.exit_code == 3
            await stream.close()
    asyncio.run(go())


def test_v4_is_accepted_and_no_channel_protocol_is_refused() -> None:
    async def go() -> None:
        async with _api_server(["v4.channel.k8s.io"]) as server:
            stream = await ExecStream.open(exec_url(server, "ns", "pod", ["true"]))
            assert stream.protocol == "v4.channel.k8s.io"
            await stream.close_stdin()  # v4 cannot: nothing is sent
            assert await _read_all(stream) == b""
            assert stream.exit_code == 0
            await stream.close()
        async with _api_server([]) as server:
            with pytest.raises(ExecError, match="no channel protocol"):
                await ExecStream.open(exec_url(server, "ns", "pod", ["true"]))
    asyncio.run(go())


def test_an_unknown_channel_or_no_server_is_an_exec_error() -> None:
    async def go() -> None:
        async with _api_server() as server:
            stream = await ExecStream.open(exec_url(server, "ns", "pod", ["bad-channel"]))
            with pytest.raises(ExecError, match="unknown exec channel 7"):
                await stream.receive()
            await stream.close()
        with pytest.raises(ExecError, match="did not start"):
            await ExecStream.open("ws://127.0.0.1:9/api/v1/namespaces/ns/pods/p/exec")
    asyncio.run(go())


async def _run_guest(stream: ExecStream, source: str) -> list[object]:
    """Drive HELLO, RUN and DONE over the exec's channels."""
    host = Connection(Role.HOST)
    events: list[object] = []
    limits = RunLimits(output_bytes=65536, value_bytes=65536, frame_bytes=1 << 20,
                       max_depth=64, max_calls_in_flight=8)
    while not any(isinstance(e, Done) for e in events):
        event = host.next_event()
        if event is NEED_DATA:
            data = await asyncio.wait_for(stream.receive(), 30)
            assert data, f"the exec ended before DONE: {bytes(stream.stderr)!r}"
            host.receive_data(data)
            continue
        events.append(event)
        if isinstance(event, Hello):
            await stream.send(host.send(Run(source, "python", (), limits)))
    return events


def test_a_guest_runs_over_the_exec_channels() -> None:
    """``python -m tether.guest --stdio`` behind the double: the frames ride
    channels 0 and 1; what the program writes to fd 1 itself never reaches
    them raw (R-STDIO-1): the Python guest sends it as output (R-OUTPUT-5)."""
    async def go() -> None:
        async with _api_server() as server:
            stream = await ExecStream.open(exec_url(
                server, "ns", "pod", [sys.executable, "-m", "tether.guest", "--stdio"]))
            events = await _run_guest(stream, "import os\nos.write(1, b'stray\\n')\n"
                                              "print('hi')\nreturn 42")
            done = events[-1]
            assert isinstance(done, Done) and done.value == 42
            await stream.close_stdin()
            assert await _read_all(stream) == b""
            assert "".join(getattr(e, "text", "") for e in events) == "stray\nhi\n"
            await stream.close()
    asyncio.run(go())


@pytest.mark.skipif(not os.environ.get("KUBECONFIG") or not os.environ.get("TETHER_K8S_POD"),
                    reason="needs a cluster: KUBECONFIG, and TETHER_K8S_POD=NAMESPACE/POD of "
                           "a pod whose image has tether installed (docs/scaling.md)")
def test_a_guest_runs_in_a_real_pod() -> None:
    kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes client is not installed")
    namespace, pod = os.environ["TETHER_K8S_POD"].split("/", 1)
    config = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(client_configuration=config)
    headers = {"Authorization": config.api_key["authorization"]} if config.api_key else {}
    import ssl

    context = ssl.create_default_context(cafile=config.ssl_ca_cert)
    if config.cert_file:
        context.load_cert_chain(config.cert_file, config.key_file)

    async def go() -> None:
        stream = await ExecStream.open(
            exec_url(config.host, namespace, pod, ["python", "-m", "tether.guest", "--stdio"]),
            headers=headers, ssl_context=context)
        events = await _run_guest(stream, "return 6 * 7")
        assert isinstance(events[-1], Done) and events[-1].value == 42
        await stream.close()
    asyncio.run(go())
