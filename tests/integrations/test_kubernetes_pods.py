"""PodLauncher's pod lifecycle against a TEST DOUBLE of the Kubernetes API
server, written here: a local HTTP server that keeps pods and
SandboxClaims in a dict (create, read, delete; a pod turns Running after a
few reads unless told never to), and forwards each pod's exec to the
WebSocket exec double of test_kubernetes.py, which runs the command as a
local subprocess. It is not Kubernetes: what it checks is that every guest
gets a pod of its own and that the pod is deleted on every path. The real
cluster is reached only by the last test, when KUBECONFIG is set."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("websockets", reason="pip install tether[kubernetes]")
kubernetes = pytest.importorskip("kubernetes", reason="pip install tether[kubernetes]")

from websockets.asyncio.server import serve  # noqa: E402
from websockets.typing import Subprotocol  # noqa: E402

from tether import Limits, PoolConfig, RunResult, Runtime, Status  # noqa: E402
from tether.integrations.kubernetes import (  # noqa: E402
    PodLauncher,
    PodTemplate,
    WarmPoolClaim,
)

from .test_kubernetes import _exec_double  # noqa: E402

GUEST = (sys.executable, "-m", "tether.guest", "--stdio", "--language", "{language}")
MANIFEST = {"apiVersion": "v1", "kind": "Pod",
            "spec": {"runtimeClassName": "gvisor",
                     "containers": [{"name": "guest", "image": "tether-guest",
                                     "command": ["sleep", "infinity"]}]}}
CLAIMS = "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/ns/sandboxclaims"
SANDBOXES = "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes/"
PODS = "/api/v1/namespaces/ns/pods"


@dataclass
class Cluster:
    """The double's state, and what the tests tell it."""

    pods: dict[str, dict[str, Any]] = field(default_factory=dict)
    claims: dict[str, str] = field(default_factory=dict)  # claim -> pod
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    exec_port: int = 0
    never_ready: bool = False
    refuse_exec: bool = False
    reads_until_running: int = 2
    stall_reads: bool = False  # a read of a pod gets no answer (until the double stops)
    unstall: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def new_pod(self, name: str, manifest: dict[str, Any]) -> dict[str, Any]:
        pod = {**manifest, "apiVersion": "v1", "kind": "Pod",
               "metadata": {**manifest.get("metadata", {}), "name": name, "namespace": "ns"},
               "status": {"phase": "Pending"}, "_reads": 0}
        self.pods[name] = pod
        self.created.append(name)
        return pod

    def read_pod(self, name: str) -> dict[str, Any] | None:
        pod = self.pods.get(name)
        if pod is None:
            return None
        pod["_reads"] += 1
        if not self.never_ready and pod["_reads"] >= self.reads_until_running:
            pod["status"] = {"phase": "Running", "containerStatuses": [{
                "name": "guest", "ready": True, "restartCount": 0, "image": "tether-guest",
                "imageID": "", "containerID": "double://1"}]}
        return pod

    def delete_pod(self, name: str) -> dict[str, Any] | None:
        pod = self.pods.pop(name, None)
        if pod is not None:
            self.deleted.append(name)
        return pod


def _public(pod: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in pod.items() if not k.startswith("_")}


class _Handler(BaseHTTPRequestHandler):
    cluster: Cluster
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _not_found(self) -> None:
        self._reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                          "reason": "NotFound", "code": 404})

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")  # type: ignore[no-any-return]

    def do_POST(self) -> None:
        body = self._body()
        with self.cluster.lock:
            if self.path.startswith(PODS):
                self._reply(201, _public(self.cluster.new_pod(body["metadata"]["name"], body)))
            elif self.path.startswith(CLAIMS):
                claim = body["metadata"]["name"]
                pod = f"{claim}-pod"
                self.cluster.new_pod(pod, MANIFEST)
                self.cluster.claims[claim] = pod
                self._reply(201, {**body, "metadata": {**body["metadata"],
                                                       "resourceVersion": "1"},
                                  "status": {"sandbox": {"name": pod}, "conditions": [
                                      {"type": "Ready", "status": "True"}]}})
            else:
                self._not_found()

    def do_GET(self) -> None:
        if self.headers.get("Upgrade", "").lower() == "websocket":
            self._forward_exec()
            return
        if self.cluster.stall_reads and self.path.startswith(PODS + "/"):
            self.cluster.unstall.wait(120)
        with self.cluster.lock:
            if self.path.startswith(SANDBOXES):
                name = self.path[len(SANDBOXES):]
                self._reply(200, {"metadata": {"name": name, "annotations": {}}})
                return
            pod = self.cluster.read_pod(self.path.rsplit("/", 1)[1]) \
                if self.path.startswith(PODS + "/") else None
        if pod is None:
            self._not_found()
        else:
            self._reply(200, _public(pod))

    def do_DELETE(self) -> None:
        with self.cluster.lock:
            if self.path.startswith(CLAIMS):
                pod = self.cluster.claims.pop(self.path.rsplit("/", 1)[1].split("?")[0], None)
                removed = None if pod is None else self.cluster.delete_pod(pod)
            else:
                removed = self.cluster.delete_pod(self.path.rsplit("/", 1)[1].split("?")[0])
        if removed is None:
            self._not_found()
        else:
            self._reply(200, _public(removed))

    def _forward_exec(self) -> None:
        """The exec's WebSocket: its request, then its bytes, both ways,
        to the exec double (refused for a pod that does not exist)."""
        name = self.path.split("/pods/", 1)[1].split("/", 1)[0]
        with self.cluster.lock:
            known = name in self.cluster.pods and not self.cluster.refuse_exec
        if not known:
            self._reply(403, {"kind": "Status", "status": "Failure", "code": 403})
            return
        upstream = socket.create_connection(("127.0.0.1", self.cluster.exec_port))
        head = f"{self.requestline}\r\n" + "".join(f"{k}: {v}\r\n"
                                                    for k, v in self.headers.items())
        upstream.sendall(head.encode() + b"\r\n")

        def pump(source: socket.socket, target: socket.socket) -> None:
            with contextlib.suppress(OSError):
                while data := source.recv(65536):
                    target.sendall(data)
            with contextlib.suppress(OSError):
                target.shutdown(socket.SHUT_WR)

        back = threading.Thread(target=pump, args=(upstream, self.connection), daemon=True)
        back.start()
        pump(self.connection, upstream)
        back.join(30)
        upstream.close()
        self.close_connection = True


@contextlib.asynccontextmanager
async def _api_server(cluster: Cluster) -> AsyncIterator[Any]:
    """The double on two local ports (REST, and the exec behind it); yields
    a kubernetes ApiClient pointed at it."""
    protocols = [Subprotocol("v5.channel.k8s.io"), Subprotocol("v4.channel.k8s.io")]
    async with serve(_exec_double, "127.0.0.1", 0, subprotocols=protocols) as ws:
        cluster.exec_port = next(iter(ws.sockets)).getsockname()[1]
        handler = type("Handler", (_Handler,), {"cluster": cluster})
        http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        http.daemon_threads = True
        thread = threading.Thread(target=http.serve_forever, daemon=True)
        thread.start()
        config = kubernetes.client.Configuration()
        config.host = f"http://127.0.0.1:{http.server_address[1]}"
        config.api_key = {"authorization": "test-token"}
        config.api_key_prefix = {"authorization": "Bearer"}
        api = kubernetes.client.ApiClient(config)
        try:
            yield api
        finally:
            cluster.unstall.set()
            http.shutdown()
            http.server_close()


def _quick(**changes: Any) -> Limits:
    return Limits(**{"timeout": 20.0, "kill_grace": 0.2, **changes})


def _run_all(cluster: Cluster, *sources: str, source_kind: str = "template",
             pool: PoolConfig | None = None, **options: Any) -> list[RunResult]:
    async def go() -> list[RunResult]:
        async with _api_server(cluster) as api:
            source = PodTemplate(MANIFEST) if source_kind == "template" \
                else WarmPoolClaim("tether-guests")
            launcher = PodLauncher(source, namespace="ns", command=GUEST, api_client=api,
                                   ready_timeout=2.0, poll_interval=0.02)
            async with Runtime(launcher=launcher, pool=pool) as rt:
                return [await rt.run(s, **{"limits": _quick(), **options}) for s in sources]

    return asyncio.run(go())


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    state = Cluster()
    yield state
    assert state.pods == {}, f"pods left behind: {sorted(state.pods)}"
    assert sorted(state.deleted) == sorted(state.created)


def test_each_run_gets_a_fresh_pod_deleted_after_it(cluster: Cluster) -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    results = _run_all(cluster, "print('hi')\nreturn await add(2, 3)", "return 7",
                       bindings={"add": add})
    assert [r.status for r in results] == [Status.OK, Status.OK], [r.error for r in results]
    assert results[0].value == 5 and results[0].output == "hi\n"
    assert results[0].stats.sandbox == "kubernetes"
    assert len(cluster.created) == 2  # never a pod that served a run


def test_a_warm_pod_waits_in_the_pool_and_serves_one_run(cluster: Cluster) -> None:
    results = _run_all(cluster, "return 1", "return 2", pool=PoolConfig(size=1))
    assert [r.value for r in results] == [1, 2]
    assert len(set(cluster.created)) == len(cluster.created) >= 2


@pytest.mark.parametrize(("failure", "message"), [
    ("never_ready", "could not be started"),  # a pod that never becomes ready
    ("refuse_exec", "exec did not start"),  # an exec that fails
])
def test_a_pod_that_cannot_run_the_guest_is_deleted(cluster: Cluster, failure: str,
                                                     message: str) -> None:
    setattr(cluster, failure, True)
    [result] = _run_all(cluster, "return 1")
    assert result.status is Status.CRASHED
    assert result.error is not None and message in result.error.message
    assert len(cluster.deleted) == 1


@pytest.mark.parametrize(("limits", "status"), [
    (_quick(), Status.CRASHED),  # the launcher's ready_timeout (1 s) comes first
    (_quick(timeout=0.5), Status.TIMEOUT),  # the run's timeout comes first
])
def test_a_stalled_api_server_cannot_hold_a_start(cluster: Cluster, limits: Limits,
                                                   status: Status) -> None:
    """Readiness polls that get no answer: the start still ends at the
    ready timeout or the run's, whichever is first, the pod is deleted and
    the Runtime closes (a bound only a hang breaks: the stall lasts 120 s)."""
    cluster.stall_reads = True

    async def go() -> RunResult:
        async with _api_server(cluster) as api:
            launcher = PodLauncher(PodTemplate(MANIFEST, request_timeout=60), namespace="ns",
                                   command=GUEST, api_client=api, ready_timeout=1.0,
                                   poll_interval=0.02, request_timeout=60)
            async with Runtime(launcher=launcher, pool=None) as rt:
                # A bound only a start held by the stalled server would reach.
                return await asyncio.wait_for(rt.run("return 1", limits=limits), 30)

    result = asyncio.run(go())
    assert result.status is status, result.error
    assert len(cluster.created) == 1


def test_a_crash_and_a_timeout_delete_their_pods(cluster: Cluster) -> None:
    crash, timeout = _run_all(cluster, "import os\nos._exit(4)", "while True:\n    pass",
                              limits=_quick(timeout=1.0))
    assert crash.status is Status.CRASHED and crash.stats.exit_code == 4
    assert timeout.status is Status.TIMEOUT
    assert len(cluster.deleted) == 2


def test_a_cancelled_run_deletes_its_pod(cluster: Cluster) -> None:
    async def go() -> RunResult:
        async with _api_server(cluster) as api:
            launcher = PodLauncher(PodTemplate(MANIFEST), namespace="ns", command=GUEST,
                                   api_client=api, poll_interval=0.02)
            async with Runtime(launcher=launcher, pool=None) as rt:
                task = asyncio.ensure_future(rt.run("import time\ntime.sleep(60)",
                                                    limits=_quick()))
                while not cluster.created:
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.5)
            return await task

    assert asyncio.run(go()).status is Status.CANCELLED


def test_a_warm_pool_claim_gets_each_run_its_own_sandbox(cluster: Cluster) -> None:
    """agent-sandbox: a SandboxClaim per guest on the SandboxWarmPool, the
    claim deleted after the run (the pool replaces the pod)."""
    pytest.importorskip("k8s_agent_sandbox", reason="pip install tether[kubernetes]")
    results = _run_all(cluster, "return 1", "return 2", source_kind="claim")
    assert [r.value for r in results] == [1, 2], [r.error for r in results]
    assert cluster.claims == {}
    assert len(cluster.created) == 2


@pytest.mark.skipif(not os.environ.get("KUBECONFIG") or not os.environ.get("TETHER_K8S_IMAGE"),
                    reason="needs a cluster: KUBECONFIG, and TETHER_K8S_IMAGE, an image with "
                           "python and tether installed (docs/scaling.md)")
def test_a_run_in_a_real_pod() -> None:
    """End to end on a real cluster: a pod from a template, one run, the
    pod deleted."""
    manifest = {"apiVersion": "v1", "kind": "Pod", "spec": {
        "automountServiceAccountToken": False, "restartPolicy": "Never",
        "containers": [{"name": "guest", "image": os.environ["TETHER_K8S_IMAGE"],
                        "command": ["sleep", "infinity"]}]}}
    namespace = os.environ.get("TETHER_K8S_NAMESPACE", "default")

    async def go() -> RunResult:
        launcher = PodLauncher(PodTemplate(manifest), namespace=namespace)
        async with Runtime(launcher=launcher, pool=None) as rt:
            return await rt.run("return 6 * 7", limits=Limits(timeout=120))

    result = asyncio.run(go())
    assert result.status is Status.OK, (result.error, result.raw_stderr)
    assert result.value == 42
