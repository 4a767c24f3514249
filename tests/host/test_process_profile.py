"""The process profile (no namespaces): the baseline the sandbox builds on.
The rest of the host tests run under the default, namespaces where available."""

from __future__ import annotations

import json
import warnings

import pytest

from tether import Runtime, Sandbox, SandboxUnavailable, Status
from tether.host import sandbox as sandbox_module

from .conftest import SPIN, no_marked_processes, pick, quick, run


def process(source: str, **kwargs: object) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "as root" is expected here
        return run(source, sandbox="process", **kwargs)


def test_hello(lang: str) -> None:
    result = process(pick(lang, python="print('hi')\nreturn 1", javascript="console.log('hi')\nreturn 1"),
                     language=lang)
    assert (result.status, result.value, result.stats.sandbox) == (Status.OK, 1, "process")  # type: ignore[attr-defined]


def test_timeout_kills_the_process_group(lang: str) -> None:
    from .test_endings import SPAWN_STUBBORN

    result = process(SPAWN_STUBBORN[lang] + SPIN[lang], language=lang,
                     limits=quick(timeout=1))
    assert result.status is Status.TIMEOUT  # type: ignore[attr-defined]
    assert json.loads(result.output)["pid"]  # type: ignore[attr-defined]
    assert no_marked_processes()


def test_memory_limit(lang: str) -> None:
    source = pick(lang, python="x = bytearray(512 * 1024 * 1024)",
                  javascript="const a = []\nwhile (true) a.push(new Array(1e6).fill(1.5))")
    result = process(source, language=lang, limits=quick(memory_bytes=256 << 20, timeout=30))
    assert (result.status, result.limit) == (Status.LIMIT, "memory_bytes")  # type: ignore[attr-defined]


def test_asking_for_namespaces_where_there_are_none_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = sandbox_module.Support(None, False, "bwrap is not installed",
                                     sandbox_module.cgroups.available())
    monkeypatch.setattr(sandbox_module, "detect", lambda: missing)
    with pytest.raises(SandboxUnavailable, match="bwrap is not installed"):
        Runtime(sandbox="namespaces")
    with pytest.warns(RuntimeWarning, match="not a security boundary"), \
            warnings.catch_warnings():
        warnings.filterwarnings("ignore", "tether: sandbox='process' as root")
        assert Runtime(sandbox="auto").sandbox is Sandbox.PROCESS
