"""One run on a started guest: the session and its calls, events,
approvals, checkpoints and replay, how it ended and its result."""
