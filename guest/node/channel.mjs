// The channel to the host (spec §3): frames written synchronously on fd 3, or
// on a private descriptor over stdio (R-STDIO-1), and the socket that reads
// them; and what the guest takes of Node's before the program runs (R-JS-4).

import fs from 'node:fs';
import net from 'node:net';
import { CODES, TYPES, encodeMessage } from './codec.mjs';
import {
  Int32ArrayCtor, ReflectApply, StringCtor, TypedArrayPrototypeSlice, uncurryThis,
} from './primordials.mjs';
import { callsPending, isRunning } from './state.mjs';

// Node's own functions the guest calls while the program runs, taken now:
// the program may replace them on their modules and prototypes (R-JS-4).
const { writeSync } = fs;

const SocketPrototypeRef = uncurryThis(net.Socket.prototype.ref);
const SocketPrototypeUnref = uncurryThis(net.Socket.prototype.unref);
const CHANNEL_FD = 3;

/** The descriptors (private ones over stdio), and the socket that reads. */
export const channel = { read: CHANNEL_FD, write: CHANNEL_FD, socket: null };

/**
 * What the guest takes at main(), before the program runs (R-JS-4): a
 * startup snapshot is built without Atomics, and with a process object of
 * its own. `reallyExit` is how the guest itself exits: process.exit would
 * run the program's 'exit' listeners, and the program's process.exit ends
 * the run instead (R-DONE-8).
 */
export const late = { reallyExit: process.reallyExit, nextTick: null, kill: null, atomicsWait: null, SharedArrayBuffer: null };

export function takeLate() {
  late.reallyExit = process.reallyExit;
  late.nextTick = process.nextTick;
  late.kill = process.kill;
  late.atomicsWait = Atomics.wait;
  late.SharedArrayBuffer = SharedArrayBuffer;
}

export const exit = (status) => ReflectApply(late.reallyExit, process, [status]);
let nap; // made at the first nap: a startup snapshot cannot hold a SharedArrayBuffer

export function writeAll(bytes) {
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(channel.write, bytes, offset);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
      // The host is draining the socket: a nap this short is about the time it
      // takes to read a full buffer (longer naps slow large results).
      late.atomicsWait(nap ??= new Int32ArrayCtor(new late.SharedArrayBuffer(4)), 0, 0, 0.05);
    }
  }
}

/**
 * Once the program runs, the channel's socket keeps Node's event loop alive
 * only while a call is in flight: the run ends when the loop has nothing
 * else left (R-DONE-9).
 */
export function holdLoopForCalls() {
  if (channel.socket === null || !isRunning()) return;
  if (callsPending()) SocketPrototypeRef(channel.socket);
  else SocketPrototypeUnref(channel.socket);
}

export function send(type, body) {
  writeAll(encodeMessage(type, body));
}

export function fail(err) {
  try {
    send(TYPES.ERROR, { code: err.code ?? CODES.INTERNAL_ERROR, message: StringCtor(err.detail ?? err.message) });
  } catch {
    // the host is gone
  }
  exit(1);
}

/**
 * Reopens `/proc/self/fd/FROM` and checks the lowest free descriptor it got
 * is `expected` (when given). Node has no dup(2); reopening a pipe, a file or
 * a terminal through /proc gives a new descriptor to the same one.
 */
function reopen(from, flags, expected) {
  const fd = fs.openSync(`/proc/self/fd/${from}`, flags);
  if (expected !== undefined && fd !== expected) {
    throw new Error(`fd ${from} was reopened on fd ${fd}, not fd ${expected}`);
  }
  return fd;
}

/**
 * The stdio transport (R-STDIO-1): frames in on fd 0 and out on fd 1, each
 * moved to a private descriptor before any program code runs; fd 0 then
 * reads /dev/null and fd 1 writes where fd 2 does, so nothing written to
 * fd 1 (a child process, fs.writeSync(1, ...)) reaches the frame stream.
 */
export function stdioChannel() {
  const { O_RDONLY, O_WRONLY, O_APPEND } = fs.constants;
  channel.read = reopen(0, O_RDONLY);
  channel.write = reopen(1, O_WRONLY);
  fs.closeSync(0);
  if (fs.openSync('/dev/null', O_RDONLY) !== 0) throw new Error('fd 0 was not reopened on /dev/null');
  fs.closeSync(1);
  reopen(2, O_WRONLY | O_APPEND, 1);
}

/**
 * Reads straight into one buffer (`onread`), past Node's stream machinery,
 * which costs a binding call much of its time. The buffer is reused, so each chunk is copied.
 */
export function reads(callback) {
  const buffer = Buffer.allocUnsafe(65536);
  return { buffer, callback: (length) => { callback(TypedArrayPrototypeSlice(buffer, 0, length)); } };
}
