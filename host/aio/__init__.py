"""The host's asyncio plumbing: tasks and worker threads that never hold
the process up, fd 3 on the event loop, frames read without holding it."""
