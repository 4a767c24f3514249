"""The asyncio host engine: spawns a guest per run and serves its calls."""

from .approvals import Allow, ApprovalRequest, Deny, Edit, requires_approval
from .bindings import HostBinding, describe_bindings, prepare_bindings, with_lookup
from .checkpoints import Suspend
from .description import Binding, Description, describe
from .events import CallEnded, CallStarted, EventsDropped, Printed, RunEvent
from .guests import GuestUnavailable
from .limits import Limits
from .pool import PoolConfig
from .remote import CommandLauncher, Launcher
from .result import CheckReport, Diagnostics, OutputChunk, RunError, RunResult, RunStats, Status
from .runtime import Runtime
from .sandbox import Sandbox, SandboxUnavailable
from .seccomp import SyscallFilter
from .sync import SyncRunSession, SyncRuntime
from .variables import RunSession

__all__ = [
    "Allow", "ApprovalRequest", "CallEnded", "CallStarted", "Deny", "Edit", "EventsDropped",
    "Printed", "RunEvent", "Suspend", "requires_approval",
    "Binding", "CheckReport", "CommandLauncher", "Description", "Diagnostics",
    "GuestUnavailable", "HostBinding", "Launcher",
    "Limits", "OutputChunk",
    "PoolConfig", "RunError", "RunResult", "RunSession", "RunStats", "Runtime", "Sandbox",
    "SandboxUnavailable", "Status", "SyncRunSession", "SyncRuntime", "SyscallFilter",
    "describe", "describe_bindings", "prepare_bindings", "with_lookup",
]
