"""tether: run one model-written program in a fresh child process, with the
host's functions available as async calls, and get back only what it printed
and returned."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Allow", "ApprovalRequest", "Binding", "CallEnded", "CallStarted", "CheckReport",
           "CommandLauncher", "Deny", "Diagnostics", "Edit", "EventsDropped", "GuestUnavailable",
           "Launcher", "Limits",
           "OutputChunk", "PoolConfig", "RunError", "RunResult", "RunSession", "RunStats",
           "Runtime", "Sandbox", "SandboxUnavailable", "Printed", "RunEvent", "Status", "Suspend",
           "SyncRunSession", "SyncRuntime", "SyscallFilter", "__version__", "requires_approval"]

if TYPE_CHECKING:
    from .host import (
        Allow,
        ApprovalRequest,
        Binding,
        CallEnded,
        CallStarted,
        CheckReport,
        CommandLauncher,
        Deny,
        Diagnostics,
        Edit,
        EventsDropped,
        GuestUnavailable,
        Launcher,
        Limits,
        OutputChunk,
        PoolConfig,
        Printed,
        RunError,
        RunEvent,
        RunResult,
        RunSession,
        RunStats,
        Runtime,
        Sandbox,
        SandboxUnavailable,
        Status,
        Suspend,
        SyncRunSession,
        SyncRuntime,
        SyscallFilter,
        requires_approval,
    )


def __getattr__(name: str) -> Any:
    # The host engine loads on first use, so the guests (which import
    # tether.codec) do not pay for it.
    if name in __all__:
        from . import host

        return getattr(host, name)
    raise AttributeError(f"module 'tether' has no attribute {name!r}")
