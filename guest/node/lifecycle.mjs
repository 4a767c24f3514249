// How a run ends (R-DONE-1, R-DONE-8, R-DONE-9, R-CANCEL-2): when Node's event
// loop has nothing left, at the program's exit, on CANCEL, SIGTERM or EOF;
// DONE is written, then the guest exits.

import { EventEmitter } from 'node:events';
import { exit, holdLoopForCalls, late, writeAll } from './channel.mjs';
import {
  CODES, ENVELOPE_OVERHEAD, TYPES, encodeFrame, encodeMessage, encodePayload, frameHeader, valueExcess,
} from './codec.mjs';
import { Cancelled, describe, fitError, fromProgram } from './errors.mjs';
import { flushOutput } from './output.mjs';
import {
  ArrayPrototypeIndexOf, ArrayPrototypeSplice, ArrayPrototypeUnshift, ErrorCtor, NumberCtor, NumberIsNaN,
  ObjectAssign, ReflectApply, SafeMap, StringCtor, uncurryThis,
} from './primordials.mjs';
import { programRequire } from './scope.mjs';
import { isRunning, state } from './state.mjs';
import { ValueModelError, toWire } from './values.mjs';
import { collectVariables, oneEntry } from './variables.mjs';

const { setImmediate: nextTurn } = globalThis;
export const EventEmitterPrototypeListeners = uncurryThis(EventEmitter.prototype.listeners);
const EventEmitterPrototypeRemoveListener = uncurryThis(EventEmitter.prototype.removeListener);
const DONE_ENVELOPE = 7; // a1 65 "value": the bytes DONE adds around the value
const WRITE_APART = 64 * 1024; // payloads from this size on are written after their header

/** DONE with `done` (an error fitted, the variables added), once; then the guest exits. */
export function finish(done) {
  const fitted = done.error && state.limits
    ? { ...done, error: fitError(done.error, state.limits.value_bytes + ENVELOPE_OVERHEAD) } : done;
  if (state.run?.variables !== undefined && fitted.error?.type !== 'Cancelled') {
    const size = encodePayload(fitted).length;
    ObjectAssign(fitted, collectVariables(size));
  }
  finishWith(encodeMessage(TYPES.DONE, fitted));
}

function finishWith(...parts) {
  if (state.phase === 'FINISHED') return;
  flushOutput();
  state.phase = 'FINISHED';
  for (let i = 0; i < parts.length; i++) writeAll(parts[i]);
  exit(0); // R-DONE-4: nothing of the program outlives DONE
}

/** DONE with the value returned, or the error of a value outside the model or over value_bytes. */
export function finishWithValue(value) {
  const { max_depth: depth, value_bytes: maxBytes } = state.limits;
  let wire;
  try {
    wire = toWire(value, depth);
  } catch (err) {
    if (!(err instanceof ValueModelError)) throw err;
    finish({ error: { type: 'TypeError', message: `return value ${err.message}`, traceback: '' } });
    return;
  }
  const payload = encodePayload(oneEntry('value', wire));
  const excess = valueExcess(payload, maxBytes, DONE_ENVELOPE, 2); // encoded once: it is the slow part
  let problem = null;
  if (excess?.kind === 'bytes') {
    problem = `return value takes ${excess.amount} bytes, over the limit of ${maxBytes} (value_bytes)`;
  } else if (excess !== null) {
    problem = `return value holds more than ${excess.amount} values (value_bytes / 16)`;
  }
  if (problem !== null) {
    finish({ error: { type: 'RangeError', traceback: '', code: CODES.VALUE_TOO_LARGE, message: problem } });
    return;
  }
  if (state.run.variables !== undefined) {
    finish({ value: wire });
    return;
  }
  if (payload.length < WRITE_APART) finishWith(encodeFrame(TYPES.DONE, payload));
  else finishWith(frameHeader(TYPES.DONE, payload.length), payload); // not copied behind it
}

/**
 * The program's process.exit (R-DONE-8) ends the run, and nothing of the
 * program runs after it but its 'exit' listeners: status 0 as a return of
 * nothing, another as a SystemExit error at the line of the exit. The
 * status is read as Node reads it: the code given (an explicit undefined
 * too), else process.exitCode, as the listeners leave it.
 */
export function programExit(...code) {
  if (code.length > 0) process.exitCode = code[0]; // Node's setter refuses what exit() would
  if (state.exiting) throw EXIT_IN_LISTENER;
  const where = fromProgram(new ErrorCtor(), programExit);
  try {
    if (isRunning() && runExitListeners()) {
      const status = exitStatus();
      if (status === 0) finishWithValue(null);
      else finish({ error: systemExit(status, where) });
    }
  } finally {
    exit(0); // where DONE went out before (a second exit), or could not
  }
}

/** The host stopped the run (CANCEL with no call to raise in, SIGTERM, EOF): DONE Cancelled, and exit. */
export function stop(reason) {
  if (isRunning()) {
    // Waiting on no call: where the last timer still to fire was set, if any (R-CANCEL-4).
    let waiting;
    for (const where of timers.values()) waiting = where;
    const error = waiting === undefined
      ? { type: 'Cancelled', message: `the run was cancelled: ${reason}`, traceback: '' }
      : describe(ObjectAssign(new Cancelled(reason), { stack: waiting.stack }));
    finish({ error });
  }
  exit(0);
}

/** The timers the program set that have not fired, each with the stack where it was set. */
const timers = new SafeMap();

/**
 * setTimeout and setInterval remember where the program called them (an
 * Error's stack, captured when the timer is set and formatted only on
 * CANCEL), so that a program stopped while it waits on a timer says where.
 */
function watchTimers() {
  const { setTimeout: once, setInterval: every, clearTimeout, clearInterval } = globalThis;
  const watched = (set, repeats) => function (callback, ...rest) {
    const where = new ErrorCtor('set here');
    const fire = typeof callback !== 'function' || repeats ? callback : function (...args) {
      timers.delete(timer);
      return ReflectApply(callback, this, args);
    };
    ArrayPrototypeUnshift(rest, fire);
    const timer = ReflectApply(set, this, rest);
    timers.set(timer, where);
    return timer;
  };
  const forget = (clear) => function (timer) {
    timers.delete(timer);
    return ReflectApply(clear, this, [timer]);
  };
  globalThis.setTimeout = Object.assign(watched(once, false), once);
  globalThis.setInterval = watched(every, true);
  globalThis.clearTimeout = forget(clearTimeout);
  globalThis.clearInterval = forget(clearInterval);
}

/**
 * CANCEL (R-CANCEL-2): the calls the program waits on, and those queued,
 * raise Cancelled, and the program may wind down; the host decides how long
 * it waits. A program that waits on no call is stopped at once.
 */
export function cancel(reason) {
  if (state.inFlight.size === 0) stop(reason);
  state.phase = 'CANCELLING';
  state.cancelReason = reason;
  for (const entry of state.inFlight) {
    state.abandoned.add(entry[0]);
    entry[1].resolve({ cancelled: reason });
  }
  state.inFlight.clear();
  const waiting = ArrayPrototypeSplice(state.waiting, 0);
  for (let i = 0; i < waiting.length; i++) waiting[i]();
  holdLoopForCalls();
}

/**
 * The host follows CANCEL with SIGTERM (R-TERM-2): the guest lives on to
 * send its DONE (R-CANCEL-4), read in the same turn of the loop as the
 * signal. A SIGTERM with no CANCEL (the program's own, or the host's to a
 * guest that has no run yet) ends the guest as it would have without this
 * handler. A program that computes without yielding runs no handler: the
 * host kills it after the grace.
 */
function onTerminate() {
  nextTurn(() => {
    if (state.phase !== 'RUNNING' && state.phase !== 'AWAIT_RUN') return;
    EventEmitterPrototypeRemoveListener(process, 'SIGTERM', onTerminate);
    ReflectApply(late.kill, process, [process.pid, 'SIGTERM']);
  });
}

/**
 * What a run needs that its RUN does not say, done as the guest starts, so
 * that a guest that waits in a pool has done it before its RUN: the signal
 * handlers, the timers that remember where they were set, the program's
 * require().
 */
export function prepare() {
  process.on('SIGXFSZ', () => {}); // past file_bytes a write fails with EFBIG instead
  process.on('SIGTERM', onTerminate);
  process.on('exit', atExit); // first: the program's listeners come after it
  watchTimers();
  programRequire();
}

/** Status 13: how Node ends a module whose top-level await nothing can settle. */
const UNSETTLED = 13;

/**
 * R-DONE-9: Node's loop has nothing left to do (no timer, I/O, handle or
 * call in flight), and Node emits 'exit': the program's own 'exit'
 * listeners run, with the status it ends with, then DONE goes out: the
 * value returned, or SystemExit for a `process.exitCode` other than 0
 * (R-DONE-8), or an error for a body whose await nothing can settle.
 */
function atExit() {
  if (!isRunning() || state.exiting) return; // the guest's own exit, or the program's
  const unsettled = state.returned === null;
  if (unsettled) process.exitCode = UNSETTLED;
  try {
    if (!runExitListeners()) return;
    const status = exitStatus();
    if (unsettled && status === UNSETTLED) {
      finish({ error: { type: 'Error', traceback: '', message: 'unsettled top-level await: the '
        + 'program awaits a promise that nothing is left to settle (no timer, I/O or call in flight)' } });
    } else if (status !== 0) {
      finish({ error: systemExit(status, null) });
    } else {
      finishWithValue(state.returned?.value ?? null);
    }
  } catch (err) { // the value's conversion threw (a getter, a Proxy's trap): the program's error
    finish({ error: describe(err) });
  }
  exit(0);
}

/** Thrown by process.exit() in an 'exit' listener: the listeners after it do not run. */
const EXIT_IN_LISTENER = Symbol('process.exit() in an exit listener');

/**
 * The program's 'exit' listeners (those after the guest's own), with the
 * status, as Node calls them: false when one threw, and the run has ended
 * with its error.
 */
function runExitListeners() {
  state.exiting = true;
  const listeners = EventEmitterPrototypeListeners(process, 'exit');
  try {
    for (let i = ArrayPrototypeIndexOf(listeners, atExit) + 1; i < listeners.length; i++) {
      ReflectApply(listeners[i], process, [exitStatus()]);
    }
  } catch (err) {
    if (err === EXIT_IN_LISTENER) return true;
    finish({ error: describe(err) });
    return false;
  }
  return true;
}

/** The status Node would exit with: process.exitCode, 0 when unset. */
function exitStatus() {
  const status = NumberCtor(process.exitCode ?? 0);
  return NumberIsNaN(status) ? 0 : status;
}

/** R-DONE-8: the error of an exit with `status`, at the line of `where` (an Error made there). */
function systemExit(status, where) {
  if (where === null) return { type: 'SystemExit', message: StringCtor(status), traceback: '' };
  const error = where;
  error.message = StringCtor(status);
  error.name = 'SystemExit';
  return describe(error);
}

/**
 * A pooled guest (--warm) runs a run's own paths once before its RUN: V8
 * compiles code on first use, so a cold run pays for it (bench/README.md).
 * One step per turn of the event loop, while nothing else happens: a RUN
 * that arrives ends the warm-up (a guest taken at once does not pay for it).
 * Nothing here touches the program's scope or writes to fd 3.
 */
