"""The asyncio host engine: spawns a guest per run and serves its calls."""

from .bindings.description import Binding, Description, describe
from .bindings.policy import ApprovalRequest, requires_approval
from .bindings.prepared import HostBinding, describe_bindings, prepare_bindings, with_lookup
from .guests.languages import GuestUnavailable
from .guests.pool import PoolConfig
from .guests.remote import CommandLauncher, Launcher
from .limits import Limits
from .result import CheckReport, Diagnostics, OutputChunk, RunError, RunResult, RunStats, Status
from .run.approvals import Allow, Deny, Edit
from .run.checkpoints import CheckpointError, Suspend
from .run.events import CallEnded, CallStarted, EventsDropped, Printed, RunEvent
from .runtime import RunSession, Runtime
from .sandbox.profiles import Sandbox, SandboxUnavailable
from .sandbox.seccomp import SyscallFilter
from .sync import SyncRunSession, SyncRuntime

__all__ = [
    "Allow", "ApprovalRequest", "CallEnded", "CallStarted", "Deny", "Edit", "EventsDropped",
    "Printed", "RunEvent", "Suspend", "requires_approval",
    "Binding", "CheckpointError", "CheckReport", "CommandLauncher", "Description", "Diagnostics",
    "GuestUnavailable", "HostBinding", "Launcher",
    "Limits", "OutputChunk",
    "PoolConfig", "RunError", "RunResult", "RunSession", "RunStats", "Runtime", "Sandbox",
    "SandboxUnavailable", "Status", "SyncRunSession", "SyncRuntime", "SyscallFilter",
    "describe", "describe_bindings", "prepare_bindings", "with_lookup",
]
