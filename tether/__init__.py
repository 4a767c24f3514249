"""tether: run one model-written program in a fresh child process, with the
host's functions available as async calls, and get back only what it printed
and returned."""

__version__ = "0.1.0"
