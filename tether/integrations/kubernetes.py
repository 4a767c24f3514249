"""Guests in Kubernetes pods (the ``kubernetes`` extra): a
fresh pod for every guest, its stdio reached through the exec API.

:class:`PodLauncher` is a :class:`~tether.Launcher`: each guest gets a pod
of its own from a :class:`PodTemplate` (a plain pod manifest, created and
deleted through the ``kubernetes`` client) or a :class:`WarmPoolClaim` (a
claim on an agent-sandbox ``SandboxWarmPool``, through its
``k8s-agent-sandbox`` SDK), waits until it runs, execs
``python -m tether.guest --stdio`` in it and lets the pod go after the run,
however the run ended. A pod that served a run is never given another: its
filesystem would carry one run's state into the next.

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

import asyncio
import contextlib
import copy
import functools
import json
import logging
import ssl
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast
from urllib.parse import quote, urlencode

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from tether.host.guests.launch import GuestProcess, GuestStartError, Remote
from tether.host.guests.remote import Launcher, Stream, command_line, guest_name_for, over_stream
from tether.host.limits import Limits

__all__ = ["CHANNEL_PROTOCOLS", "GUEST_COMMAND", "ExecError", "ExecStream", "Pod", "PodLauncher",
           "PodSource", "PodTemplate", "WarmPoolClaim", "exec_url"]

logger = logging.getLogger("tether")

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


# -- pods ---------------------------------------------------------------------

#: What each pod runs for its guest (``{language}``: the run's language).
GUEST_COMMAND = ("python", "-m", "tether.guest", "--stdio", "--language", "{language}")
#: Seconds one call of the API server (create, read or delete a pod) may
#: take (the client's ``_request_timeout``): a server that stalls cannot
#: hold a start, its cleanup or the Runtime's close.
REQUEST_TIMEOUT = 10.0
_T = TypeVar("_T")


@dataclass(frozen=True)
class Pod:
    """A pod acquired for one guest: its ``name``, and what its source
    needs to let it go (``claim``: the SandboxClaim that holds it)."""

    name: str
    claim: str | None = None


class PodSource(Protocol):
    """Where a :class:`PodLauncher` gets each guest's pod. Both methods
    block (they run in a worker thread); ``release`` must tolerate a pod
    that is already gone."""

    def acquire(self, api_client: Any, namespace: str) -> Pod: ...

    def release(self, api_client: Any, namespace: str, pod: Pod) -> None: ...


class PodTemplate:
    """A pod per guest from a plain pod ``manifest`` (a dict, as a YAML
    file loads): created with a name of its own, deleted after its run
    (``grace_period_seconds=0``). Its guest container (``PodLauncher``'s
    ``container``) only needs to stay alive (``sleep infinity``): each run
    execs its own guest. ``request_timeout``: seconds each API call may
    take."""

    def __init__(self, manifest: Mapping[str, Any], *,
                 request_timeout: float = REQUEST_TIMEOUT) -> None:
        if manifest.get("kind", "Pod") != "Pod" or not isinstance(manifest.get("spec"), Mapping):
            raise ValueError("PodTemplate needs a Pod manifest with a spec")
        self.manifest = copy.deepcopy(dict(manifest))
        self.request_timeout = request_timeout

    def acquire(self, api_client: Any, namespace: str) -> Pod:
        from kubernetes import client

        body = copy.deepcopy(self.manifest)
        body.setdefault("apiVersion", "v1")
        body.setdefault("kind", "Pod")
        metadata = body.setdefault("metadata", {})
        metadata["name"] = guest_name_for()
        metadata.setdefault("labels", {})["tether.run/guest"] = "true"
        metadata.pop("generateName", None)
        pod = Pod(metadata["name"])
        try:
            client.CoreV1Api(api_client).create_namespaced_pod(
                namespace, cast(Any, body), _request_timeout=self.request_timeout)
        except BaseException:  # out of time, say, where the server made it all the same
            with contextlib.suppress(Exception):
                self.release(api_client, namespace, pod)
            raise
        return pod

    def release(self, api_client: Any, namespace: str, pod: Pod) -> None:
        from kubernetes import client

        try:
            client.CoreV1Api(api_client).delete_namespaced_pod(
                pod.name, namespace, grace_period_seconds=0,
                _request_timeout=self.request_timeout)
        except client.ApiException as exc:
            if exc.status != 404:
                raise


class WarmPoolClaim:
    """A pod per guest claimed from an agent-sandbox ``SandboxWarmPool``
    named ``warm_pool`` (``k8s-agent-sandbox``'s SandboxClaim), its claim
    deleted after the run (the pool then replaces the pod; the claimed one
    is never handed out again). ``timeout``: seconds for the claim to be
    bound and ready."""

    def __init__(self, warm_pool: str, *, timeout: int = 60) -> None:
        self.warm_pool = warm_pool
        self.timeout = timeout

    def acquire(self, api_client: Any, namespace: str) -> Pod:
        from k8s_agent_sandbox.constants import POD_NAME_ANNOTATION
        from k8s_agent_sandbox.k8s_helper import K8sHelper

        helper = K8sHelper(api_client)
        claim = guest_name_for()
        created = helper.create_sandbox_claim(claim, self.warm_pool, namespace)
        try:
            sandbox = helper.wait_for_claim_ready(claim, namespace, self.timeout,
                                                  initial_claim=created)
            annotations = ((helper.get_sandbox(sandbox, namespace) or {}).get("metadata")
                           or {}).get("annotations") or {}
        except BaseException:
            helper.delete_sandbox_claim(claim, namespace)
            raise
        return Pod(annotations.get(POD_NAME_ANNOTATION) or sandbox, claim=claim)

    def release(self, api_client: Any, namespace: str, pod: Pod) -> None:
        from k8s_agent_sandbox.k8s_helper import K8sHelper

        if pod.claim is not None:
            K8sHelper(api_client).delete_sandbox_claim(pod.claim, namespace)


class PodLauncher(Launcher):
    """Each guest in a fresh pod from ``source`` (:class:`PodTemplate` or
    :class:`WarmPoolClaim`) in ``namespace``::

        launcher = PodLauncher(WarmPoolClaim("tether-guests"))
        async with tether.Runtime(launcher=launcher) as rt: ...

    ``api_client``: a ``kubernetes.client.ApiClient`` (default: one from
    the pod's service account inside a cluster, else from ``KUBECONFIG`` or
    ``~/.kube/config``, loaded at the first start); its host, token and
    certificates also open the exec. The launcher waits up to ``ready_timeout`` seconds for the
    pod to run (polling every ``poll_interval``), then runs ``command`` in
    ``container`` over the exec API. The pod is released after the run on
    every path: a pod that never became ready, an exec that failed, a
    crash, a timeout, a cancelled run. ``request_timeout``: seconds each
    readiness poll may take, and how long a cancelled start waits for its
    pod's creation before it leaves the release to the thread creating it."""

    name = "kubernetes"

    def __init__(self, source: PodSource, *, namespace: str = "default",
                 container: str = "guest", command: Sequence[str] = GUEST_COMMAND,
                 api_client: Any = None, ready_timeout: float = 120.0,
                 poll_interval: float = 0.25,
                 request_timeout: float = REQUEST_TIMEOUT) -> None:
        self.source = source
        self.namespace = namespace
        self.container = container
        self.command = tuple(command)
        self.ready_timeout = ready_timeout
        self.poll_interval = poll_interval
        self.request_timeout = request_timeout
        self._api_client = api_client

    def _api(self) -> Any:
        if self._api_client is None:
            from kubernetes import client, config

            try:  # inside the cluster, its service account; else KUBECONFIG or ~/.kube/config
                config.load_incluster_config()  # type: ignore[no-untyped-call]
            except config.ConfigException:
                config.load_kube_config()  # type: ignore[no-untyped-call]
            self._api_client = client.ApiClient()
        return self._api_client

    async def start(self, language: str, limits: Limits, *, warm: bool) -> GuestProcess:
        api = self._api()
        pod = await self._acquire(api)
        try:
            await self._until_running(api, pod.name)
            stream = await self._exec(api, pod.name, command_line(self.command, pod.name,
                                                                  language))
        except BaseException as exc:
            await _blocking(self.source.release, api, self.namespace, pod,
                            wait=self.request_timeout)
            if isinstance(exc, ExecError | TimeoutError):
                raise GuestStartError(f"pod {pod.name}: {exc}") from exc
            raise
        child = over_stream(Stream(
            receive=stream.receive, send=stream.send, close_send=stream.close_stdin,
            close=stream.close, exit_code=lambda: stream.exit_code,
            stderr=lambda: bytes(stream.stderr)), raw_output_bytes=limits.raw_output_bytes)

        async def release() -> None:
            try:
                await stream.close()
            finally:
                await _blocking(self.source.release, api, self.namespace, pod,
                                wait=self.request_timeout)

        return GuestProcess(child, 0, remote=Remote(self.name, kill=stream.close,
                                                    release=release))

    async def _acquire(self, api: Any) -> Pod:
        """The source's pod. If the start is cancelled meanwhile, the pod
        is released before the cancellation goes on; a creation that takes
        longer than ``request_timeout`` more is left to release its pod
        itself, in its thread, once it has one."""
        lock = threading.Lock()
        abandoned = False

        def acquire() -> Pod | None:
            pod = self.source.acquire(api, self.namespace)
            with lock:
                if not abandoned:
                    return pod
            self.source.release(api, self.namespace, pod)  # its start was given up
            return None

        job = asyncio.get_running_loop().run_in_executor(None, acquire)
        try:
            pod = await asyncio.shield(job)
        except asyncio.CancelledError:
            with lock:
                abandoned = True
            await asyncio.wait([job], timeout=self.request_timeout)
            if not job.done():
                logger.warning("tether: a pod's creation, cancelled, is still going after "
                               "%g s; its thread deletes the pod when it has one",
                               self.request_timeout)
                job.add_done_callback(_retrieved)
            elif not job.cancelled() and job.exception() is None and job.result() is not None:
                await _blocking(self.source.release, api, self.namespace, job.result(),
                                wait=self.request_timeout)
            raise
        assert pod is not None  # None only once abandoned, that is, cancelled
        return pod

    async def _until_running(self, api: Any, name: str) -> None:
        from kubernetes import client

        core = client.CoreV1Api(api)
        async with asyncio.timeout(self.ready_timeout):
            while True:
                # Cancelled (out of time), a read is not waited for: it changes nothing.
                pod = await _blocking(functools.partial(
                    core.read_namespaced_pod, name, self.namespace,
                    _request_timeout=self.request_timeout), wait=0)
                phase = pod.status.phase if pod.status is not None else None
                statuses = (pod.status.container_statuses or []) if pod.status else []
                if phase == "Running" and all(s.ready for s in statuses):
                    return
                if phase in ("Succeeded", "Failed"):
                    raise ExecError(f"the pod ended ({phase}) before it was ready")
                await asyncio.sleep(self.poll_interval)

    async def _exec(self, api: Any, name: str, command: Sequence[str]) -> ExecStream:
        config = api.configuration
        headers = {}
        token = config.get_api_key_with_prefix("authorization")
        if token:
            headers["Authorization"] = token
        return await ExecStream.open(
            exec_url(config.host, self.namespace, name, command, container=self.container),
            headers=headers, ssl_context=_ssl_context(config))

    async def aclose(self) -> None:
        if self._api_client is not None:
            await _blocking(self._api_client.close, wait=self.request_timeout)


def _ssl_context(config: Any) -> ssl.SSLContext | None:
    """The exec's TLS settings, from the API client's configuration."""
    if not str(config.host).startswith("https"):
        return None
    context = ssl.create_default_context(cafile=config.ssl_ca_cert)
    if not config.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if config.cert_file:
        context.load_cert_chain(config.cert_file, config.key_file)
    return context


async def _blocking(function: Callable[..., _T], *args: Any, wait: float) -> _T:
    """``function(*args)`` in a worker thread. If the caller is cancelled,
    the call is waited for up to ``wait`` seconds more (a pod being deleted
    is not lost to a cancellation), never longer: a worker thread stuck on
    a stalled server cannot hold a start's timeout or the Runtime's close."""
    job = asyncio.get_running_loop().run_in_executor(None, functools.partial(function, *args))
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        if wait > 0:
            await asyncio.wait([job], timeout=wait)
        if not job.done():
            logger.info("tether: a cancelled Kubernetes API call is left to end in its thread")
            job.add_done_callback(_retrieved)
        raise


def _retrieved(job: asyncio.Future[Any]) -> None:
    """A call no one waits for any more: its outcome is read (not logged as
    never retrieved)."""
    if not job.cancelled():
        job.exception()
