"""The asyncio host engine: spawns a guest per run and serves its calls."""

from .bindings import HostBinding, prepare_bindings
from .guests import GuestUnavailable
from .limits import Limits
from .pool import PoolConfig
from .result import OutputChunk, RunError, RunResult, RunStats, Status
from .runtime import Runtime
from .sandbox import Sandbox, SandboxUnavailable
from .seccomp import SyscallFilter

__all__ = [
    "GuestUnavailable", "HostBinding", "Limits", "OutputChunk", "PoolConfig", "RunError",
    "RunResult", "RunStats", "Runtime", "Sandbox", "SandboxUnavailable", "Status",
    "SyscallFilter", "prepare_bindings",
]
