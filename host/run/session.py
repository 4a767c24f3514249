"""One run on a started guest (host/guests/launch.py), to its cleanup: the host
role of the protocol on asyncio.

The codec decides what is legal; this module dispatches the guest's frames,
hands its calls to host/run/serving.py, and always tears everything down: calls
cancelled, process group killed and reaped, descriptors closed, work
directory removed. How the run ended is decided in host/run/endings.py, its
result assembled in host/run/assembly.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from tether.codec import (
    CONNECTION_CLOSED,
    Call,
    Cancel,
    Done,
    Error,
    ErrorCode,
    Event,
    Hello,
    Message,
    Output,
    Payload,
    RemoteProtocolError,
    State,
)

from ..aio.channel import Channel
from ..aio.reader import Reader
from ..guests.launch import LimitsNotApplied, StartedGuest
from ..guests.process import Child
from ..guests.process_limits import ProcessLimits
from ..result import RunError, RunResult, Status
from .approvals import Clock
from .assembly import Measured, assemble
from .endings import (
    Ending,
    broken_protocol,
    cancelled,
    claims_out_of_memory,
    crash,
    done_ending,
    exit_ending,
    protocol_error,
)
from .last_words import LastWords
from .output import CappedOutput
from .request import RunRequest
from .serving import BindingCalls, Serving
from .variables import returned_variables_problem

logger = logging.getLogger("tether")
#: How a run ends that is cancelled before it has another ending.
_CANCELLED = cancelled("the run was cancelled")
#: Endings the host decides on its own, after which it listens for where the
#: program was (R-CANCEL-4).
_HOST_ENDED = (Status.TIMEOUT, Status.CANCELLED)


class Session:
    def __init__(
        self,
        request: RunRequest,
        guest: StartedGuest,
        *,
        defer: Callable[[Coroutine[Any, Any, None]], asyncio.Future[None]] | None = None,
        serving: Serving | None = None,
    ) -> None:
        """``guest`` is the started guest the run uses (and ends with it);
        ``defer`` takes the teardown after a DONE, to finish after run() returns
        (without it, run() returns only once everything is reaped).
        ``serving`` says how the calls are served (host/run/serving.py); its
        ``observer`` is also told about output and the channel's bytes as
        they happen."""
        serving = serving or Serving()
        self.request = request
        self.language = request.language
        self.limits = limits = request.limits
        self._guest = guest
        self._launched = guest.process
        self._cpu: float | None = None
        self._defer = defer
        self._conn = guest.conn
        self._channel: Channel | None = None
        self._reader: Reader | None = None
        self._ending: asyncio.Future[Ending] | None = None
        self._output = CappedOutput(limits.output_bytes)
        #: A resumed run's output before its suspension point: its result's
        #: if it never gets there.
        self._replayed_output = CappedOutput(limits.output_bytes)
        self._observer = serving.observer
        self._clock = Clock(limits.approval_pause)
        self._calls = BindingCalls(request, self._conn, send=self._send, finish=self._finish,
                                   clock=self._clock, serving=serving)
        self._last_words = LastWords(limits.kill_grace)

    # -- the run -----------------------------------------------------------

    async def run(self) -> RunResult:
        result = await self._run()
        if self._calls.host_exit is not None:
            raise self._calls.host_exit
        return result

    async def _run(self) -> RunResult:
        loop = asyncio.get_running_loop()
        self._ending = loop.create_future()
        guest = self._guest
        workdir = guest.workdir
        started = loop.time() if guest.since is None else guest.since
        ending = _CANCELLED
        child = self._launched.child
        # Until the teardown is deferred: what the finally clause must end.
        owned: Child | None = child
        try:
            # A warm guest's RUN goes out first, before the event loop
            # watches the channel: the guest starts on it while the host
            # does the rest.
            self._reader = Reader(self._conn, child.channel, on_event=self._on_event,
                                  on_error=self._on_read_error,
                                  finished=self._no_more_frames,
                                  tap=None if self._observer is None else self._observer.wire)
            self._channel = self._reader.channel
            if guest.hello is not None:
                try:
                    self._on_hello(guest.hello)
                except RemoteProtocolError as exc:
                    self._protocol_failure(exc)
            if not self._finished:
                self._channel.resume_reading()
            child.raw_stdout.limit = child.raw_stderr.limit = self.limits.raw_output_bytes
            try:
                async with (asyncio.timeout(self.limits.timeout) if guest.deadline is None
                            else asyncio.timeout_at(guest.deadline)) as deadline:
                    self._clock.deadline = deadline  # stands still while approvals wait
                    ending = await self._until_end(child)
            except TimeoutError:
                paused = self._clock.stood_still()
                ending = Ending(Status.TIMEOUT, RunError(
                    "Timeout", f"the program did not finish within {self.limits.timeout:g} s"
                    + (f" (and {paused:.3g} s its clock stood still for approvals)"
                       if paused else "")))
            wall_time = loop.time() - started
            self._cpu = self._launched.cpu_seconds()
            if ending.after_done and self._defer is not None:
                # The result is known: nothing of the program may run on, so the
                # group is killed and its calls cancelled now; reaping and
                # removing the work directory happen after run() returns.
                self._stop_calls()
                self._launched.kill()
                result = self._result(ending, wall_time, None)
                self._defer(self._teardown(ending, workdir))
                owned = None
                return result
            if self._defer is not None and ending.status in _HOST_ENDED \
                    and self._launched.remote is None:
                # Once the guest has had its grace and SIGKILL is sent, nothing
                # of the program runs on: its processes die and are reaped
                # after run() returns, so a loaded machine does not delay the
                # result by the time the dying take.
                await self._stop(ending)
                result = self._result(self._last_words.locate(ending), wall_time, None)
                self._defer(self._teardown(ending, workdir, killed=True))
                owned = None
                return result
            exit_code = await self._shut_down(ending)
            ending = self._last_words.locate(ending)
            result = self._result(ending, wall_time, exit_code)
            if self._defer is not None:
                # Every process of the run is gone: removing its cgroup and
                # work directory need not delay the result.
                self._defer(self._release(workdir))
                owned = None
            return result
        finally:
            # Reached with an exception too, e.g. when run() itself is cancelled
            # (perhaps twice): the teardown is a task of its own, which the
            # Runtime's close waits for, so a second cancellation cannot cut
            # it short.
            if owned is not None:
                teardown = self._teardown(ending, workdir)
                await asyncio.shield(self._defer(teardown) if self._defer is not None
                                     else asyncio.ensure_future(teardown))

    async def _teardown(self, ending: Ending, workdir: str | None, *,
                        killed: bool = False) -> None:
        try:
            await self._shut_down(ending, killed=killed)
        finally:
            await self._release(workdir)

    async def _release(self, workdir: str | None) -> None:
        """Every host-side resource of the run (after its processes are gone)."""
        await self._launched.release(workdir)

    def cancel(self) -> None:
        """End the run now with status ``cancelled`` (the runtime is closing)."""
        self._finish(cancelled("the runtime was closed"))

    async def _until_end(self, child: Child) -> Ending:
        assert self._ending is not None
        waiting: set[asyncio.Future[Any]] = {self._ending, child.exited}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        # The guest exited: whatever it sent is already in the socket buffer.
        assert self._channel is not None and self._reader is not None
        if child.exited.done():
            self._channel.stop_writing()
        while not self._ending.done():
            drained = self._channel.read_available(everything=True)
            await self._reader.settled()
            if drained:
                break
            await asyncio.sleep(0)  # reading is paused until a later turn
        if not self._ending.done() or self._ending.result().status is Status.CRASHED:
            # Ended without DONE: the exit status tells a crash from a limit.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(child.exited), self.limits.kill_grace)
            if child.exited.done():
                cgroup = self._launched.cgroup
                child.drain_pipes()
                return exit_ending(self._launched.guest_status(child.exited.result()),
                                   cgroup_out_of_memory=cgroup is not None
                                   and cgroup.out_of_memory(),
                                   stderr=child.raw_stderr.text())
        return self._ending.result()

    async def _shut_down(self, ending: Ending, *, killed: bool = False) -> int:
        """Terminate the guest and reap it (``killed``: SIGKILL was sent)."""
        listen = await self._end(ending)
        code = await self._launched.terminate(self.limits.kill_grace,
                                              kill_now=ending.after_done or killed)
        if listen:
            await self._last_words.collect()
        return code

    async def _stop(self, ending: Ending) -> None:
        """End a run the host ends itself: the guest has the grace to say where
        it was (R-CANCEL-4), then SIGKILL; what it said is read. Its processes
        are reaped later (:meth:`_teardown`)."""
        listen = await self._end(ending)
        await self._launched.stop(self.limits.kill_grace,
                                  said=self._last_words.said if listen else None)
        if listen:
            await self._last_words.collect()

    async def _end(self, ending: Ending) -> bool:
        """The run's ending decided: CANCEL to a running guest, and its calls
        cancelled (R-TERM-3). True when the host listens for its last words."""
        self._finish(ending)
        listen = ending.status in _HOST_ENDED and self._conn.state is State.RUNNING
        if listen:
            self._send(Cancel(reason=ending.status.value))  # a courtesy (R-CANCEL-1)
            assert self._reader is not None
            self._last_words.listen(self._reader)
        calls = self._stop_calls(close=not listen)
        await asyncio.gather(*calls, return_exceptions=True)
        return listen

    def _stop_calls(self, *, close: bool = True) -> list[asyncio.Task[None]]:
        """Close the channel (unless the host still listens) and cancel the
        binding calls in flight (R-TERM-3)."""
        if self._channel is not None and close:
            self._channel.close()
        return self._calls.cancel()

    def _finish(self, ending: Ending) -> None:
        if self._ending is not None and not self._ending.done():
            self._ending.set_result(ending)
            if self._channel is not None:
                self._channel.pause_reading()

    @property
    def _finished(self) -> bool:
        return self._ending is None or self._ending.done()

    # -- frames from the guest ---------------------------------------------

    def _no_more_frames(self) -> bool:
        return self._finished and not self._last_words.listening

    def _on_event(self, event: Event) -> None:
        if self._last_words.listening:
            if isinstance(event, Output):  # what the guest held back, flushed as it stops
                self._on_output(event)
            self._last_words.heard(event)
        elif event is CONNECTION_CLOSED:
            self._finish(crash("the guest closed its channel before finishing"))
        elif isinstance(event, Hello):
            self._on_hello(event)
        elif isinstance(event, Call):
            self._calls.call(event)
        elif isinstance(event, Output):
            self._on_output(event)
        elif isinstance(event, Done):
            self._finish(self._on_done(event))
        elif isinstance(event, Error):
            self._finish(protocol_error(f"the guest reported {event.code.name}: "
                                        f"{event.message}"))

    def _on_read_error(self, exc: Exception) -> None:
        if self._last_words.listening:
            self._last_words.heard(None)  # a broken frame after CANCEL: nothing more to hear
            return
        if isinstance(exc, RemoteProtocolError):
            self._protocol_failure(exc)
            return
        # A bug of ours: end the run rather than hang it.
        logger.error("tether: internal error while reading the guest's frames", exc_info=exc)
        self._finish(protocol_error(f"the host failed on the guest's frames: {exc!r}",
                                    "InternalError"))

    def _protocol_failure(self, exc: RemoteProtocolError) -> None:
        self._send(Error(exc.code, exc.message))  # R-ERR-1
        self._finish(broken_protocol(exc))

    def _on_hello(self, hello: Hello) -> None:
        if self.language not in hello.languages:
            raise RemoteProtocolError(ErrorCode.LANGUAGE_UNSUPPORTED,
                                      f"the guest does not run {self.language!r}")
        limits = self.request.wire_limits()
        try:
            self._launched.apply_limits(ProcessLimits.of_run(self.language, limits))
        except LimitsNotApplied as exc:  # no program runs under limits not its own
            self._finish(crash(f"the guest could not be started: {exc}"))
            return
        self._send(self.request.run_message(limits))

    def _on_output(self, output: Output) -> None:
        if self._calls.replaying:
            # Printed before the suspension point: shown by the suspended run.
            self._replayed_output.add(output.stream.value, output.text)
            return
        self._output.add(output.stream.value, output.text)
        if self._observer is not None:
            self._observer.output(output.stream.value, output.text)

    def _on_done(self, done: Done) -> Ending:
        problem = None if done.variables is None else returned_variables_problem(
            done, self._conn.last_payload_size, self.limits.variables_bytes)
        ending = done_ending(done, at_memory_limit=claims_out_of_memory(done) and
                             self._launched.at_memory_limit(self.limits.memory_bytes,
                                                            self.language),
                             variables_problem=problem)
        if ending.status in (Status.OK, Status.ERROR) and self._calls.replaying:
            # A resumed run that ended before its suspension point took another way.
            error = ending.error
            how = "returned" if error is None else f"failed ({error.type}: {error.message})"
            diverged = self._calls.ended_early(how)
            return Ending(Status.ERROR, RunError(
                "ResumeDiverged", diverged, "" if error is None else error.traceback,
                None if error is None else error.line), after_done=True)
        return ending

    def _send(self, message: Message, payload: Payload | None = None) -> None:
        if self._reader is not None and (not self._finished
                                         or isinstance(message, Cancel | Error)):
            self._reader.send(message, payload)

    # -- the result --------------------------------------------------------

    def _result(self, ending: Ending, wall_time: float, exit_code: int | None) -> RunResult:
        assert self._channel is not None
        # A resumed run that ended before its suspension point is no
        # continuation of the suspended one: all it printed.
        output = self._replayed_output if self._calls.replaying else self._output
        return assemble(ending, output, self._launched, Measured(
            wall_time=wall_time, cpu_seconds=self._cpu, calls=self._calls.count,
            bytes_in=self._channel.bytes_in, bytes_out=self._channel.bytes_out,
            exit_code=exit_code))
