"""The asyncio host engine: spawns a guest per run and serves its calls."""

from .bindings import HostBinding, prepare_bindings
from .guests import GuestUnavailable
from .limits import Limits
from .pool import PoolConfig
from .result import OutputChunk, RunError, RunResult, RunStats, Status
from .runtime import Runtime
from .sandbox import Sandbox, SandboxUnavailable
from .sync import SyncRunSession, SyncRuntime
from .variables import RunSession

__all__ = [
    "GuestUnavailable", "HostBinding", "Limits",
    "OutputChunk", "PoolConfig", "RunError", "RunResult", "RunStats",
    "RunSession", "Runtime", "Sandbox", "SandboxUnavailable", "Status",
    "SyncRunSession", "SyncRuntime",
    "prepare_bindings",
]
