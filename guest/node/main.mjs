// tether's Node.js guest: runs one JavaScript or TypeScript program and
// speaks the tether protocol on fd 3 (spec §7, guest role), or, with
// TETHER_TRANSPORT=stdio, on stdin/stdout (spec §3.1).
//
//   node --disable-warning=ExperimentalWarning main.mjs --cwd DIR [--warm]
//
// The program is the body of an async function: top-level await, `return x`,
// each binding an async function in scope. console.* and
// process.stdout/stderr.write become OUTPUT frames. Frames are written
// synchronously, so nothing printed is lost if the program then blocks the
// event loop; reads come through the event loop.

import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createRequire, isBuiltin } from 'node:module';
import { StringDecoder } from 'node:string_decoder';
import { pathToFileURL } from 'node:url';
import { inspect, types } from 'node:util';
import {
  CODES, PROTOCOL_VERSION, TYPES, DEFAULT_MAX_DEPTH, DEFAULT_VALUE_BYTES, ENVELOPE_OVERHEAD, Encoded, FrameDecoder,
  ProtocolError, countItems, decodeMessage, encodeFrame, encodeMessage, encodePayload,
  frameHeader, nextState, valueExcess, valueItems, variableNameProblem,
} from './codec.mjs';
import { ValueModelError, fromWire, toWire } from './values.mjs';
import {
  ArrayBufferIsView, ArrayIsArray, ArrayPrototypeFilter, ArrayPrototypeIndexOf, ArrayPrototypeJoin, ArrayPrototypeMap,
  ArrayPrototypePop, ArrayPrototypePush, ArrayPrototypeShift, ArrayPrototypeSlice, ArrayPrototypeSplice,
  ArrayPrototypeUnshift, BufferByteLength, BufferFrom, TextDecoderPrototypeDecode,
  TextEncoderPrototypeEncode,
  ErrorCaptureStackTrace, ErrorCtor, Int32ArrayCtor, MapCtor, MapPrototypeGet, MapPrototypeSet, MathMax,
  MathMin, NumberCtor, NumberIsNaN, ObjectAssign, ObjectGetOwnPropertyDescriptor, ObjectGetOwnPropertyNames,
  ObjectGetPrototypeOf, ObjectHasOwn, ObjectPrototypeToString, ObjectValues, PromiseCtor, RangeErrorCtor,
  ReflectApply, RegExpPrototypeExec, SafeMap, SafeSet, SafeWeakSet,
  StringCtor, StringPrototypeCharCodeAt, StringPrototypeSlice, StringPrototypeSplit,
  StringPrototypeStartsWith, StringPrototypeToWellFormed, SymbolCtor, TypeErrorCtor, TypedArrayPrototypeSlice,
  TypedArrayPrototypeSubarray, Uint8ArrayCtor, mapKeys, uncurryThis,
} from './primordials.mjs';
import { positionalCount } from './arguments.mjs';
import { topLevel } from './toplevel.mjs';
import { mayHaveModuleSyntax, moduleSyntax } from './imports.mjs';

// Node's own functions the guest calls while the program runs, taken now:
// the program may replace them on their modules and prototypes (R-JS-4).
const { writeSync } = fs;
const { setImmediate: nextTurn } = globalThis;
const EventEmitterPrototypeListeners = uncurryThis(EventEmitter.prototype.listeners);
const EventEmitterPrototypeRemoveListener = uncurryThis(EventEmitter.prototype.removeListener);
const SocketPrototypeRef = uncurryThis(net.Socket.prototype.ref);
const SocketPrototypeUnref = uncurryThis(net.Socket.prototype.unref);
const StringDecoderPrototypeWrite = uncurryThis(StringDecoder.prototype.write);
const StringDecoderPrototypeEnd = uncurryThis(StringDecoder.prototype.end);

const CHANNEL_FD = 3;
/** The descriptors (private ones over stdio), and the socket that reads. */
const channel = { read: CHANNEL_FD, write: CHANNEL_FD, socket: null };
const LANGUAGES = ['javascript', 'typescript'];
const FILENAME = '<program>';
const OUTPUT_CHUNK = 16 * 1024; // characters per OUTPUT frame
const DONE_ENVELOPE = 7; // a1 65 "value": the bytes DONE adds around the value
const WRITE_APART = 64 * 1024; // payloads from this size on are written after their header
const VERSION = JSON.parse(fs.readFileSync(new URL('./package.json', import.meta.url))).version;
// A guest started from a startup snapshot finds console.Console undefined: it is put back at main().
const ConsoleClass = console.Console;
/**
 * What the guest takes at main(), before the program runs (R-JS-4): a
 * startup snapshot is built without Atomics, and with a process object of
 * its own. `reallyExit` is how the guest itself exits: process.exit would
 * run the program's 'exit' listeners, and the program's process.exit ends
 * the run instead (R-DONE-8).
 */
const late = { reallyExit: process.reallyExit, nextTick: null, kill: null, atomicsWait: null, SharedArrayBuffer: null };

function takeLate() {
  late.reallyExit = process.reallyExit;
  late.nextTick = process.nextTick;
  late.kill = process.kill;
  late.atomicsWait = Atomics.wait;
  late.SharedArrayBuffer = SharedArrayBuffer;
}

const exit = (status) => ReflectApply(late.reallyExit, process, [status]);

/**
 * A binding call that failed on the host (R-RESULT-5): `type`, `message` and
 * `code` as sent, `binding` the binding's name. Uncaught, it ends the run
 * with the message `TYPE: MESSAGE` (`text`).
 */
class BindingError extends Error {
  constructor(binding, error) {
    super(error.message);
    this.name = 'BindingError';
    this.binding = binding;
    this.type = error.type;
    this.code = error.code;
  }

  get text() {
    return this.message ? `${this.type}: ${this.message}` : this.type;
  }
}

/** Raised at the binding calls a program waits on when the run is cancelled (R-CANCEL-2). */
class Cancelled extends Error {
  constructor(reason) {
    super(`the run was cancelled: ${reason}`);
    this.name = 'Cancelled';
  }
}

// ---- the channel --------------------------------------------------------------------

let nap; // made at the first nap: a startup snapshot cannot hold a SharedArrayBuffer

function writeAll(bytes) {
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

const state = {
  phase: 'AWAIT_RUN', // then RUNNING, CANCELLING, FINISHED (spec §8)
  lastCallId: 0,
  inFlight: new SafeMap(), // call id -> {resolve}: settled with the RESULT's body
  abandoned: new SafeSet(), // ids cancelled in the program whose RESULT may still come
  cancelReason: '',
  waiting: [], // calls queued beyond max_calls_in_flight
  limits: null,
  decoder: new FrameDecoder(),
  run: null,
  globalsBefore: new SafeSet(), // the global object's names before the program ran
  reserved: new SafeMap(), // RUN's variables whose names JavaScript reserves
  capture: null, // () => [[name, getter]...] of the program's top-level names (§7.9)
  returned: null, // {value} once the program's body has returned
  exiting: false, // the program's 'exit' listeners are running
  meta: false, // the program reads import.meta
  warming: false, // a pooled guest runs its own paths once while it waits for RUN (warm.mjs)
};

const REGISTER = '__tether_register__';
const CAPTURE = '__tether_capture__';
const IMPORT = '__tether_import__';
const META = '__tether_meta__';

/**
 * Once the program runs, the channel's socket keeps Node's event loop alive
 * only while a call is in flight: the run ends when the loop has nothing
 * else left (R-DONE-9).
 */
function holdLoopForCalls() {
  if (channel.socket === null || !isRunning()) return;
  if (callsPending()) SocketPrototypeRef(channel.socket);
  else SocketPrototypeUnref(channel.socket);
}

function send(type, body) {
  writeAll(encodeMessage(type, body));
}

function fail(err) {
  try {
    send(TYPES.ERROR, { code: err.code ?? CODES.INTERNAL_ERROR, message: StringCtor(err.detail ?? err.message) });
  } catch {
    // the host is gone
  }
  exit(1);
}

function onData(chunk) {
  state.warming = false; // the host spoke (its RUN): whatever is left of the warm-up is skipped
  try {
    state.decoder.push(chunk);
    for (let frame = state.decoder.next(); frame !== null; frame = state.decoder.next()) {
      if (frame.type >= 0x80) continue; // no extension negotiated (R-FRAME-7)
      onMessage(decodeMessage(frame, state.limits?.max_depth ?? DEFAULT_MAX_DEPTH,
        state.limits?.value_bytes ?? DEFAULT_VALUE_BYTES));
    }
  } catch (err) {
    fail(err instanceof ProtocolError ? err : new ProtocolError(CODES.INTERNAL_ERROR, err.message));
  }
}

function onEof() {
  try {
    state.decoder.checkEof();
  } catch (err) {
    fail(err);
  }
  // R-TRANS-4: no host is left to answer a call; fd 3 closes with this
  // handler (its writable side was never open), so DONE goes out now.
  stop('the host closed the connection');
}

function onMessage({ type, name, body }) {
  if (nextState(state.phase, 'host', name) === undefined) { // the state table (spec §8)
    throw new ProtocolError(CODES.UNEXPECTED_MESSAGE, `${name} in state ${state.phase}`);
  }
  if (type === TYPES.RUN) {
    start(body);
  } else if (type === TYPES.RESULT) {
    const call = state.inFlight.get(NumberCtor(body.id));
    if (call === undefined && state.abandoned.delete(NumberCtor(body.id))) return;
    if (call === undefined) {
      throw new ProtocolError(CODES.INVALID_CALL_ID, `RESULT for unknown call ${body.id}`);
    }
    state.inFlight.delete(NumberCtor(body.id));
    if (state.phase === 'FINISHED') return; // late result (R-STATE-4)
    call.resolve(body);
    const next = ArrayPrototypeShift(state.waiting);
    if (next) next();
    holdLoopForCalls();
  } else if (type === TYPES.CANCEL) {
    if (state.phase === 'RUNNING') cancel(body.reason); // else late (R-STATE-4)
  } else if (type === TYPES.ERROR) {
    exit(1); // R-ERR-2
  }
}

// ---- output ------------------------------------------------------------------

function output(stream, text) {
  // All of it, past output_bytes too: the host keeps the end (R-OUTPUT-3).
  if (!isRunning()) return;
  const clean = StringPrototypeToWellFormed(text); // lone surrogates become U+FFFD (R-OUTPUT-2)
  let start = 0;
  while (start < clean.length) {
    let end = MathMin(start + OUTPUT_CHUNK, clean.length);
    const code = StringPrototypeCharCodeAt(clean, end - 1);
    if (end < clean.length && code >= 0xd800 && code <= 0xdbff) end += 1; // keep the pair
    const piece = StringPrototypeSlice(clean, start, end);
    send(TYPES.OUTPUT, { stream, text: piece });
    start = end;
  }
}

/**
 * Each stream's bytes as text (R-OUTPUT-4): a character split across two
 * writes is held back until the next write to its stream completes it.
 */
const decoders = new SafeMap();
let bytesWritten = false; // since the last flush: a program that writes only text never flushes

/** What the decoders hold, but `except`'s, as U+FFFD: before a CALL, DONE, or a write elsewhere. */
function flushOutput(except = null) {
  if (!bytesWritten) return;
  bytesWritten = except !== null; // the bytes `except` holds stay held
  for (const entry of decoders) {
    const stream = entry[0];
    // end() leaves the decoder empty, to use again
    const rest = stream === except ? '' : StringDecoderPrototypeEnd(entry[1]);
    if (rest) output(stream, rest);
  }
}

function captureOutput() {
  for (const [stream, target] of [['stdout', process.stdout], ['stderr', process.stderr]]) {
    const decoder = new StringDecoder('utf8');
    decoders.set(stream, decoder);
    target.write = (chunk, encoding, callback) => {
      // Node's write(chunk[, encoding][, callback]): a string in another
      // encoding (hex, base64, latin1...) stands for its bytes.
      // A typed array goes to the decoder as it is: Buffer.from would call its valueOf.
      const bytes = typeof chunk !== 'string' ? (ArrayBufferIsView(chunk) ? chunk : BufferFrom(chunk))
        : typeof encoding === 'string' && RegExpPrototypeExec(/^utf-?8$/i, encoding) === null
          ? BufferFrom(chunk, encoding) : null;
      flushOutput(bytes === null ? null : stream); // a string completes no held bytes
      if (bytes !== null) bytesWritten = true;
      output(stream, bytes === null ? chunk : StringDecoderPrototypeWrite(decoder, bytes));
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') late.nextTick(done);
      return true;
    };
  }
}

// ---- binding calls ------------------------------------------------------------

/** A binding shows the host's description: `doc`, `signature`, and toString() as declared. */
function makeBinding({ name, signature, doc }) {
  const positional = positionalCount(signature);
  // Not async: an async function returning call()'s promise would settle
  // through its `then`, which the program may have replaced (R-JS-4).
  const binding = (...args) => call(name, args, binding, positional);
  const text = `${doc ? `${doc}\n` : ''}declare function ${name}${signature ?? '(...args: any[]): Promise<any>'};`;
  Object.defineProperties(binding, {
    name: { value: name },
    doc: { value: doc ?? null },
    signature: { value: signature ?? null },
    toString: { value: () => text },
  });
  return binding;
}

/**
 * `error`, its stack taken again from below `above` (a function on the stack):
 * the program's `e.stack` shows its own frames, not the guest's and its path.
 */
function fromProgram(error, above) {
  ErrorCaptureStackTrace(error, above);
  return error;
}

async function call(name, programArgs, binding, positional = null) {
  const { max_depth: depth, value_bytes: maxBytes, max_calls_in_flight: maxCalls } = state.limits;
  // Trailing undefined arguments are left out (§6.1): JavaScript treats them
  // as missing, so the binding's defaults apply; one before a defined argument is null.
  let count = programArgs.length;
  // Past the parameters the binding declares, arguments are ignored, as in
  // JavaScript (the host leaves them out too): `xs.map(binding)` does not
  // send the whole array with each element.
  if (positional !== null && count > positional) count = positional;
  while (count > 0 && programArgs[count - 1] === undefined) count -= 1;
  const wireArgs = ArrayPrototypeMap(ArrayPrototypeSlice(programArgs, 0, count), (arg, i) => {
    try {
      return toWire(arg, depth);
    } catch (err) {
      if (err instanceof ValueModelError) {
        throw fromProgram(new TypeErrorCtor(`${name}() argument ${i + 1}: ${err.message}`), binding);
      }
      throw err;
    }
  });
  const args = new Encoded(encodePayload(wireArgs)); // once: for the size and to send
  // As [args, kwargs], kwargs empty (a0): 2 bytes and 2 items more.
  const excess = valueExcess(args.bytes, maxBytes, -2, -2);
  if (excess?.kind === 'bytes') {
    throw fromProgram(new RangeErrorCtor(`${name}() arguments take ${excess.amount} bytes, over the limit of ${maxBytes} (value_bytes)`), binding);
  }
  if (excess !== null) {
    throw fromProgram(new RangeErrorCtor(`${name}() arguments hold more than ${excess.amount} values (value_bytes / 16)`), binding);
  }
  let queued = false;
  while (state.inFlight.size >= maxCalls && isRunning()) { // R-CALL-3: queue in the guest
    queued = true;
    await new PromiseCtor((resolve) => ArrayPrototypePush(state.waiting, resolve));
  }
  if (state.phase === 'FINISHED') return new PromiseCtor(() => {}); // the run is over
  // R-CANCEL-2: a queued call is cancelled with the rest
  if (queued && state.phase === 'CANCELLING') throw fromProgram(new Cancelled(state.cancelReason), call);
  const id = ++state.lastCallId;
  const settled = new PromiseCtor((resolve) => state.inFlight.set(id, { resolve }));
  holdLoopForCalls();
  flushOutput();
  send(TYPES.CALL, { id, name, args, kwargs: new MapCtor() });
  const result = await settled;
  // Raised here, inside the program's await chain, so the stack shows its line.
  if (result.cancelled !== undefined) throw fromProgram(new Cancelled(result.cancelled), call);
  if (result.error) throw fromProgram(new BindingError(name, result.error), call);
  return fromWire(result.value);
}

// ---- the program ---------------------------------------------------------------

/**
 * What compile() put before the program's code: `prefixLength`, the
 * wrapper's text on line 1, and `inserted`, each text put before program
 * code on a program line as [line, column, width] (column 0-based, in the
 * program's own source), by column: undone in the columns an error shows.
 */
const compiled = { prefixLength: 0, inserted: [] };

/**
 * The program as a function of its scope's names, returning the program's
 * async function. The names are parameters of an enclosing function, not of
 * the program's own, so that the program's declarations may shadow them
 * (R-RUN-6, R-VARS-2) in every mode. With `options.capture`, the body is
 * given a declaration that reads its top-level names (R-VARS-4); with
 * `options.lastExpression` a last bare expression is returned (R-VARS-7).
 */
function compile(source, language, names, options = {}) {
  const nested = options.capture || options.lastExpression;
  // R-JS-3: static imports become bindings first in the body, on line 1.
  const modular = mayHaveModuleSyntax(source)
    ? moduleSyntax(source, { importer: IMPORT, meta: META }, language === 'typescript' ? stripTypes : null)
    : null;
  state.meta = modular?.meta ?? false;
  // On line 1, so that lines keep their numbers. A module is strict code, as
  // under Node. The body awaits once before the program's first statement
  // (after its directives): the promise it returns is then settled through
  // `then` before the program could replace it (R-JS-4).
  const strict = modular !== null && modular.module ? "'use strict'; " : '';
  const head = nested
    ? `(function (${[...names, REGISTER].join(', ')}) { ${strict}return async function () { await ${REGISTER}(${CAPTURE});`
    : `(function (${names.join(', ')}) { ${strict}return async function () {${directives(source) ? '' : ' await null;'}`;
  const prefix = head + (modular?.hoisted ?? '');
  compiled.prefixLength = prefix.length;
  compiled.inserted = [[1, 0, compiled.prefixLength], ...(modular?.widened ?? [])];
  let code = `${prefix}${modular?.source ?? source}\n}; })`;
  if (language === 'typescript') code = stripTypes(code);
  if (nested) {
    const edited = topLevel(code, { ...options, capture: CAPTURE, variables: options.variables });
    code = edited.code;
    for (const [line, column, width] of edited.inserted) {
      compiled.inserted.push([line, line === 1 ? column - compiled.prefixLength : column, width]);
    }
    compiled.inserted.sort((a, b) => a[1] - b[1]);
  }
  let script;
  try {
    script = new vm.Script(code, {
      filename: FILENAME,
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
  } catch (err) {
    // amaro strips types but leaves decorators, which Node 20 cannot parse:
    // V8's "Invalid or unexpected token" alone does not say why.
    if (err instanceof SyntaxError && atDecorator(err.stack)) err.message += ' (decorators are not supported)';
    throw err;
  }
  return script.runInThisContext();
}

/** Whether `source` may start with a directive ('use strict'), which must stay its first statement. */
const directives = (source) => RegExpPrototypeExec(/^(?:\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*['"]/, source) !== null;

/** Whether the caret of a syntax error's stack (as V8 shows it) is at `@name`. */
function atDecorator(stack) {
  const shown = /^<program>:\d+\n(.*)\n( *)\^/.exec(stack);
  return shown !== null && /^@[\p{ID_Start}$_]/u.test(shown[1].slice(shown[2].length));
}

let amaroModule;
function loadAmaro() {
  amaroModule ??= createRequire(import.meta.url)('amaro');
  return amaroModule;
}

/** TypeScript `code` with its types blanked (amaro), or a SyntaxError at its line (`line`: the first's). */
function stripTypes(code, line = 1) {
  try {
    return loadAmaro().transformSync(code, { mode: 'strip-only' }).code;
  } catch (err) {
    const what = err.code === 'UnsupportedSyntax'
      ? `${err.message} (use plain TypeScript types only: no enum, namespace or parameter properties)`
      : err.message;
    const syntax = new SyntaxError(what);
    syntax.programLine = line + (err.startLine ?? 1) - 1;
    throw syntax;
  }
}

/**
 * The loader of a program's static imports (R-JS-3, imports.mjs): Node's
 * built-in modules, and packages as the program's require() finds them
 * (node_packages included); a file cannot be imported, as the program is
 * one file. An error is the import's, at its line, as Node reports a
 * module it cannot link before the program runs. `load` is the program's
 * own import().
 */
async function importModule(specifier, line, load, names) {
  // At the import's own line: the bindings were put on line 1.
  const failed = (error) => Object.assign(error, { programLine: line,
    stack: `${errorType(error)}: ${error.message}\n    at <program>:${line}:1` });
  let url = specifier;
  if (/^(?:\.{0,2}\/|file:)/.test(specifier)) {
    const error = failed(new Error(`Cannot import '${specifier}': a program is one file, with no `
      + 'files of its own to import (import Node\'s built-in modules or an installed package)'));
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  if (!isBuiltin(specifier)) {
    try {
      url = pathToFileURL(programRequire().resolve(specifier)).href;
    } catch (err) {
      if (err.code !== 'MODULE_NOT_FOUND') throw failed(err);
      const error = failed(new Error(`Cannot find package '${specifier}': only Node's built-in `
        + 'modules and the installed packages can be imported'));
      error.code = 'ERR_MODULE_NOT_FOUND';
      throw error;
    }
  }
  let namespace;
  try {
    namespace = await load(url);
  } catch (err) {
    throw failed(err);
  }
  for (const name of names) {
    if (!(name in namespace)) {
      throw failed(new SyntaxError(`The requested module '${specifier}' does not provide an export named '${name}'`));
    }
  }
  const whole = namespace.default;
  if (whole !== null && (typeof whole === 'object' || typeof whole === 'function')) modules.add(whole);
  return namespace;
}

/** What `import.meta` is in a program (R-JS-3): that of a module at `<cwd>/program.mjs`. */
function programMeta() {
  const filename = path.join(process.cwd(), 'program.mjs');
  const url = pathToFileURL(filename).href;
  const resolve = (specifier) => (isBuiltin(specifier) ? specifier
    : pathToFileURL(programRequire().resolve(specifier)).href);
  return { url, filename, dirname: process.cwd(), resolve };
}

/**
 * The program's own frames only (R-DONE-2), with columns of line 1 unshifted.
 * `compiling`: the error is the program's own syntax error, shown at its line.
 */
function describe(err, compiling = false) {
  if (!(err instanceof ErrorCtor)) {
    return { type: 'Error', message: `uncaught ${typeof err}: ${shown(err)}`, traceback: '' };
  }
  const stack = typeof err.stack === 'string' ? err.stack : '';
  const frames = ArrayPrototypeMap(
    ArrayPrototypeFilter(StringPrototypeSplit(stack, '\n'),
      (line) => RegExpPrototypeExec(/^\s+at .*<program>:\d+:\d+/, line) !== null),
    programPositions);
  let line = err.programLine;
  if (line === undefined && frames.length > 0) line = NumberCtor(RegExpPrototypeExec(/<program>:(\d+):/, frames[0])[1]);
  if (line === undefined && compiling) {
    const where = RegExpPrototypeExec(/^<program>:(\d+)/, stack);
    if (where) line = NumberCtor(where[1]);
  }
  const type = errorType(err);
  const message = err instanceof BindingError ? err.text : textOf(err.message);
  // Only there: a SyntaxError the program throws or JSON.parse raises has frames instead.
  const lines = compiling && line !== undefined ? syntaxContext(stack, line) : [];
  ArrayPrototypePush(lines, `${type}: ${message}`);
  for (let i = 0; i < frames.length; i++) ArrayPrototypePush(lines, frames[i]);
  const error = { type, message, traceback: `${ArrayPrototypeJoin(lines, '\n')}\n` };
  if (line !== undefined) error.line = line;
  return error;
}

const POSITION = /<program>:(\d+):(\d+)/g;

/** A frame's `<program>:LINE:COLUMN`s with the columns of the program's source (programColumn). */
function programPositions(frame) {
  let out = '';
  let at = 0;
  POSITION.lastIndex = 0;
  for (let match = RegExpPrototypeExec(POSITION, frame); match !== null; match = RegExpPrototypeExec(POSITION, frame)) {
    const row = NumberCtor(match[1]);
    out += `${StringPrototypeSlice(frame, at, match.index)}<program>:${row}:${programColumn(row, NumberCtor(match[2]))}`;
    at = match.index + match[0].length;
  }
  return out + StringPrototypeSlice(frame, at);
}

/** A thrown value as Node shows it uncaught (R-DONE-6): a string as it is, else util.inspect's text. */
function shown(value) {
  if (typeof value === 'string') return value;
  try {
    return inspect(value);
  } catch {
    return textOf(value);
  }
}

/** `String(value)`, or where that throws (an object without a prototype) its kind. */
function textOf(value) {
  try {
    return StringCtor(value);
  } catch {
    try {
      return ObjectPrototypeToString(value); // `[object Object]`
    } catch {
      return `[${typeof value}]`; // a Proxy's trap threw
    }
  }
}

/**
 * R-DONE-6: the class name of an Error subclass. A `name` the error or its
 * own class's prototype holds is the program's choice (`this.name = ...`, a
 * DOMException's); one inherited from a base class (`class E extends Error {}`
 * inherits Error.prototype.name) is not, and the constructor names the class.
 */
function errorType(err) {
  try {
    let holder = err;
    while (holder !== null && !ObjectHasOwn(holder, 'name')) holder = ObjectGetPrototypeOf(holder);
    const own = holder === err || holder === ObjectGetPrototypeOf(err);
    const name = own ? err.name : err.constructor?.name;
    return (typeof name === 'string' && name) || StringCtor(err.name || 'Error');
  } catch {
    return 'Error'; // a getter or proxy trap of the program's threw
  }
}

/** A 1-based column of the compiled code as a column of the program's source line. */
function programColumn(line, column) {
  let at = column - 1;
  for (let i = 0; i < compiled.inserted.length; i++) { // by column: each undone in turn
    const row = compiled.inserted[i][0];
    const where = compiled.inserted[i][1];
    const width = compiled.inserted[i][2];
    if (row === line && at >= where + width) at -= width;
    else if (row === line && at >= where) at = where; // inside the inserted text
  }
  return at + 1;
}

/** Where a syntax error is, as V8 shows it: `<program>:2`, the line, a caret. */
function syntaxContext(stack, line) {
  const shown = RegExpPrototypeExec(/^<program>:\d+\n(.*)\n(.*)\n/, stack);
  if (!shown) return [`<program>:${line}`];
  const cut = line === 1 ? compiled.prefixLength : 0; // line 1 starts with the wrapper's prefix
  return [`<program>:${line}`, StringPrototypeSlice(shown[1], cut), StringPrototypeSlice(shown[2], cut)];
}

function finish(done) {
  const fitted = done.error && state.limits
    ? { ...done, error: fitError(done.error, state.limits.value_bytes + ENVELOPE_OVERHEAD) } : done;
  if (state.run?.variables !== undefined && fitted.error?.type !== 'Cancelled') {
    const size = encodePayload(fitted).length;
    ObjectAssign(fitted, collectVariables(size));
  }
  finishWith(encodeMessage(TYPES.DONE, fitted));
}

const MAX_ERROR_TYPE_BYTES = 256;

/**
 * R-DONE-7: valid text in every field, and a DONE payload within `budget`
 * bytes: the traceback is shortened first, then the message.
 */
function fitError(error, budget) {
  const fixed = ObjectAssign({}, error, {
    type: cut(StringPrototypeToWellFormed(StringCtor(error.type)), MAX_ERROR_TYPE_BYTES),
    message: StringPrototypeToWellFormed(StringCtor(error.message)),
    traceback: StringPrototypeToWellFormed(StringCtor(error.traceback)),
  });
  const size = (e) => encodePayload({ error: e }).length;
  if (size(fixed) <= budget) return fixed;
  // Room for the two texts: what the rest takes, and up to 8 bytes of lengths.
  const room = MathMax(0, budget - size(ObjectAssign({}, fixed, { message: '', traceback: '' })) - 8);
  const message = cut(fixed.message, room);
  return ObjectAssign(fixed, { message, traceback: cut(fixed.traceback, room - BufferByteLength(message)) });
}

/** `text` within `limit` UTF-8 bytes, cut at a code point, ending with an ellipsis when cut. */
function cut(text, limit) {
  const bytes = TextEncoderPrototypeEncode(utf8Encoder, text);
  if (bytes.length <= limit) return text;
  if (limit < 3) return '';
  let end = limit - 3;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1; // not inside a character
  return `${TextDecoderPrototypeDecode(utf8Decoder, TypedArrayPrototypeSubarray(bytes, 0, end))}\u2026`;
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/**
 * DONE's `variables` and `dropped` (R-VARS-4, R-VARS-5): the values of the
 * program's top-level names that fit, and why each other name is left out.
 * `size`: DONE's payload without them.
 */
function collectVariables(size) {
  const { max_depth: depth, variables_bytes: variablesBytes, frame_bytes: frameBytes } = state.limits;
  let budget = MathMin(variablesBytes, frameBytes - 1024 - size);
  let itemsLeft = valueItems(MathMax(budget, 0));
  const variables = new MapCtor();
  const reasons = [];
  let getters = [];
  if (state.capture) {
    getters = state.capture();
  } else {
    const names = mapKeys(state.run.variables);
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      if (!state.reserved.has(name)) {
        ArrayPrototypePush(getters, [name, () => fromWire(MapPrototypeGet(state.run.variables, name))]);
      }
    }
  }
  for (const entry of state.reserved) ArrayPrototypePush(getters, [entry[0], () => fromWire(entry[1])]);
  const declared = new SafeSet();
  for (let i = 0; i < getters.length; i++) declared.add(getters[i][0]);
  const globals = ObjectGetOwnPropertyNames(globalThis);
  for (let i = 0; i < globals.length; i++) { // `x = 1` without a declaration
    const name = globals[i];
    if (!state.globalsBefore.has(name) && !declared.has(name)) {
      const descriptor = ObjectGetOwnPropertyDescriptor(globalThis, name);
      if (descriptor && ObjectHasOwn(descriptor, 'value')) ArrayPrototypePush(getters, [name, () => descriptor.value]);
    }
  }
  for (let i = 0; i < getters.length; i++) {
    const name = getters[i][0];
    let value;
    try {
      value = getters[i][1]();
    } catch {
      continue; // still in its temporal dead zone: never assigned
    }
    if (value === undefined || typeof value === 'function' || StringPrototypeStartsWith(name, '_') || isModule(value)) continue;
    const problem = variableNameProblem(name);
    if (problem) {
      ArrayPrototypePush(reasons, [name, `the name ${problem}`]);
      continue;
    }
    if (surelyOver(value, budget, itemsLeft)) { // not converted: it could take long
      ArrayPrototypePush(reasons, [name, `$: is over what is left of variables_bytes (${MathMax(budget, 0)} bytes, ${itemsLeft} values)`]);
      continue;
    }
    let wire;
    try {
      wire = toWire(value, depth);
    } catch (err) {
      ArrayPrototypePush(reasons, [name, err instanceof ValueModelError ? err.message : `$: cannot be converted: ${err}`]);
      continue;
    }
    const encoded = encodePayload(oneEntry(name, wire));
    const items = countItems(encoded, itemsLeft + 2);
    if (encoded.length > budget || items - 2 > itemsLeft) {
      ArrayPrototypePush(reasons, [name, `$: takes ${encoded.length} bytes, over what is left of variables_bytes (${MathMax(budget, 0)})`]);
      continue;
    }
    MapPrototypeSet(variables, name, wire);
    budget -= encoded.length;
    itemsLeft -= items - 1;
  }
  const dropped = new MapCtor();
  for (let i = 0; i < reasons.length; i++) { // after the values: the values matter more
    const name = reasons[i][0];
    const reason = reasons[i][1];
    const cost = encodePayload(oneEntry(name, reason)).length;
    if (cost <= budget && itemsLeft >= 2) { // its name and its reason
      MapPrototypeSet(dropped, name, reason);
      budget -= cost;
      itemsLeft -= 2;
    }
  }
  return { dropped, variables };
}

/** A wire map of one entry. */
function oneEntry(key, value) {
  const map = new MapCtor();
  MapPrototypeSet(map, key, value);
  return map;
}

function finishWith(...parts) {
  if (state.phase === 'FINISHED') return;
  flushOutput();
  state.phase = 'FINISHED';
  for (let i = 0; i < parts.length; i++) writeAll(parts[i]);
  exit(0); // R-DONE-4: nothing of the program outlives DONE
}

function finishWithValue(value) {
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
function programExit(...code) {
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

const isRunning = () => state.phase === 'RUNNING' || state.phase === 'CANCELLING';

function stop(reason) {
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
function cancel(reason) {
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

const LEAVING = SymbolCtor('leaving'); // on surelyOver's stack after an object's values, the object below it

/**
 * Whether `value` holds more than `items` items or `budget` bytes of text,
 * looking at no more. A value that contains itself is not counted again
 * (the conversion names the cycle); one shared by two parents is, as the
 * conversion writes it twice.
 */
function surelyOver(value, budget, items) {
  const stack = [value];
  const within = new SafeSet(); // the objects on the path to the item
  try {
    while (stack.length > 0) {
      const item = ArrayPrototypePop(stack);
      if (item === LEAVING) {
        within.delete(ArrayPrototypePop(stack));
        continue;
      }
      if (--items < 0) return true;
      if (typeof item === 'string' || item instanceof Uint8ArrayCtor) {
        budget -= item.length;
        if (budget < 0) return true;
      } else if (item !== null && typeof item === 'object' && !(item instanceof MapCtor) && !within.has(item)) {
        const values = ArrayIsArray(item) ? item : ObjectValues(item);
        if (!ArrayIsArray(item)) items -= values.length; // the keys
        within.add(item);
        ArrayPrototypePush(stack, item, LEAVING);
        for (let i = 0; i < values.length && i <= items; i++) ArrayPrototypePush(stack, values[i]);
      }
    }
  } catch {
    return false; // a getter threw: the conversion says so
  }
  return false;
}

function isParameterName(name) {
  try {
    new Function(name, ''); // eslint-disable-line no-new-func -- compiles, runs nothing
    return true;
  } catch {
    return false;
  }
}

/**
 * What a run needs that its RUN does not say, done as the guest starts, so
 * that a guest that waits in a pool has done it before its RUN: the signal
 * handlers, the timers that remember where they were set, the program's
 * require().
 */
function prepare() {
  process.on('SIGXFSZ', () => {}); // past file_bytes a write fails with EFBIG instead
  process.on('SIGTERM', onTerminate);
  process.on('exit', atExit); // first: the program's listeners come after it
  watchTimers();
  programRequire();
}

let required;
const programRequire = () => (required ??= recording(createRequire(path.join(process.cwd(), 'program.js'))));

/** What the program's require() returned: modules, which R-VARS-4 leaves out of its variables. */
const modules = new SafeWeakSet();

function recording(load) {
  const require = (id) => {
    const exports = load(id);
    if (exports !== null && typeof exports === 'object') modules.add(exports);
    return exports;
  };
  return ObjectAssign(require, load); // its resolve, cache, main and extensions
}

const { isModuleNamespaceObject } = types;
const isModule = (value) => modules.has(value) || isModuleNamespaceObject(value); // a dynamic import's too

function start(run) {
  if (!LANGUAGES.includes(run.language)) {
    throw new ProtocolError(CODES.LANGUAGE_UNSUPPORTED, `cannot run ${run.language}`);
  }
  state.limits = run.limits;
  state.run = run;
  state.decoder.maxFrameBytes = run.limits.frame_bytes;
  state.phase = 'RUNNING';
  captureOutput();
  process.exit = programExit;
  const scope = new Map([
    ...commonJs(),
    ['BindingError', BindingError],
    ['Cancelled', Cancelled],
    [IMPORT, importModule],
    [META, null], // made once the program is compiled: only a module reads it
  ]);
  for (const binding of run.bindings) scope.set(binding.name, makeBinding(binding));
  const variables = new Map();
  for (const [name, value] of run.variables ?? []) {
    // A name JavaScript reserves (`default`, from a Python run) cannot be in
    // scope; it goes back in DONE as it came.
    if (isParameterName(name)) variables.set(name, value);
    else state.reserved.set(name, value);
  }
  for (const [name, value] of variables) scope.set(name, fromWire(value));
  const capture = run.variables !== undefined;
  if (capture) state.globalsBefore = new SafeSet(ObjectGetOwnPropertyNames(globalThis));
  if (capture || run.last_expression) {
    const register = (get) => { state.capture = capture ? get : null; };
    // The variables' values, for a body that declares one again with `var` (toplevel.mjs).
    register.initial = Object.fromEntries([...variables.keys()].map((name) => [name, scope.get(name)]));
    scope.set(REGISTER, register);
  }
  for (const event of ['uncaughtException', 'unhandledRejection']) {
    const ending = (err) => {
      // As in plain Node, a listener of the program's own handles the error
      // and the program goes on; with none, the error ends the run.
      const listeners = EventEmitterPrototypeListeners(process, event);
      for (let i = 0; i < listeners.length; i++) if (listeners[i] !== ending) return;
      finish({ error: describe(err) });
    };
    process.on(event, ending);
  }
  let program;
  try {
    program = compile(run.source, run.language, [...scope.keys()].filter((n) => n !== REGISTER),
      { capture, lastExpression: run.last_expression, variables: [...variables.keys()] });
  } catch (err) {
    finish({ error: describe(err, true) });
    return;
  }
  if (state.meta) {
    scope.set(META, programMeta());
    process.argv[1] = scope.get(META).filename; // `import.meta.url === pathToFileURL(argv[1]).href`
  }
  // Started by a microtask of its own, the program has none of the guest's
  // frames (and paths) below its own in the stacks it sees. What it returns
  // is sent when Node's loop has nothing left to do (atExit).
  Promise.resolve().then(program(...scope.values()))
    .then((value) => { state.returned = { value }; },
      (err) => finish({ error: describe(err) })); // at once, as Node ends at an uncaught error
  holdLoopForCalls();
}

/**
 * What a CommonJS script has in scope besides its globals: require(), and
 * `module`, `exports`, `__filename` and `__dirname` of a script at
 * `<cwd>/program.js`, which is require.main (`require.main === module`).
 */
function commonJs() {
  const require = programRequire();
  const filename = path.join(process.cwd(), 'program.js');
  const module = { id: '.', path: process.cwd(), filename, loaded: false, exports: {}, children: [], paths: [] };
  require.main = module;
  return [['require', require], ['module', module], ['exports', module.exports],
    ['__filename', filename], ['__dirname', process.cwd()]];
}

const callsPending = () => state.inFlight.size > 0 || state.waiting.length > 0;

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

function warmUp(steps = warmSteps()) {
  if (!state.warming || steps.length === 0) return;
  steps.shift()();
  setImmediate(() => warmUp(steps));
}

function warmSteps() {
  return [
    ...codeSteps(),
    compileRunPath,
    warmConsole,
    warmReads,
    () => compile('1', 'javascript', [], { lastExpression: true }), // loads the parser
  ];
}

/**
 * The warm-up steps that run only the guest's own code: no stream, socket,
 * handle or package. Run while a startup snapshot is built, what V8 compiles
 * for them is in the snapshot.
 */
function codeSteps() {
  const limits = { output_bytes: 1 << 20, value_bytes: 1 << 20, frame_bytes: 1 << 24,
    max_depth: 64, max_calls_in_flight: 64, memory_bytes: 1 << 28 };
  const run = encodeMessage(TYPES.RUN, { source: 'return 1', language: 'javascript',
    bindings: [{ name: 'f' }], limits });
  const sample = [{ id: 1, name: 'x', ok: true, at: 1.5, data: new Uint8Array(2) }, 'é', null];
  const codec = () => {
    const decoder = new FrameDecoder();
    decoder.push(run);
    decodeMessage(decoder.next());
    fromWire(toWire(sample, 64));
    encodeFrame(TYPES.DONE, encodePayload(new Map([['value', toWire(sample, 64)]])));
    encodeMessage(TYPES.OUTPUT, { stream: 'stdout', text: 'hello\n' });
  };
  return [
    ...Array(30).fill(codec), // many times, one a turn: V8 optimizes what runs often
    () => compile('return 1', 'javascript', ['f']),
  ];
}

/**
 * V8 compiles a function at its first call: the functions of a run's own
 * path are called here where each returns or throws at its first statement
 * (there is no run yet), so that the run does not wait for their compiling.
 */
function compileRunPath() {
  const refused = [
    () => start({ language: '' }), // no such language
    () => onMessage({ name: 'RESULT' }), // not before RUN
    () => finishWithValue(null), // no limits yet
  ];
  for (const attempt of refused) {
    try {
      attempt();
    } catch {
      // as expected
    }
  }
  output('stdout', ''); // not running: nothing is sent
  flushOutput(); // no decoder yet: nothing is held
  writeAll(new Uint8Array(0));
}

/**
 * console.* formats through code that is compiled on first use too; its
 * writes go nowhere here (the real ones would reach the raw output).
 */
function warmConsole() {
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((stream) => stream.write);
  for (const stream of streams) stream.write = () => true;
  try {
    console.log('%s %d', 'warm', 1, { a: [1.5, 'b'] });
    console.error('warm');
  } finally {
    streams.forEach((stream, i) => { stream.write = writes[i]; });
  }
}

/**
 * The first read on a socket runs Node's read path for the first time
 * (costly cold): a pooled guest runs it once on a connection to itself over
 * an abstract Unix socket (no file, nothing on fd 3), closed at once. Any
 * other process that connects meanwhile only has its connection closed.
 */
function warmReads() {
  const name = `\0tether-warm-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const server = net.createServer((peer) => {
    peer.on('error', () => {});
    peer.end('x');
  });
  server.on('error', () => {});
  server.listen(name, () => {
    const client = net.connect({ path: name, onread: reads(() => client.destroy()) });
    client.on('error', () => {});
    client.on('close', () => server.close());
  });
  server.unref();
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
function stdioChannel() {
  const { O_RDONLY, O_WRONLY, O_APPEND } = fs.constants;
  channel.read = reopen(0, O_RDONLY);
  channel.write = reopen(1, O_WRONLY);
  fs.closeSync(0);
  if (fs.openSync('/dev/null', O_RDONLY) !== 0) throw new Error('fd 0 was not reopened on /dev/null');
  fs.closeSync(1);
  reopen(2, O_WRONLY | O_APPEND, 1);
}

function main() {
  takeLate();
  console.Console ??= ConsoleClass;
  const transport = process.env.TETHER_TRANSPORT || 'fd3';
  if (transport !== 'fd3' && transport !== 'stdio') { // R-STDIO-4
    process.stderr.write(`tether-node: transport ${JSON.stringify(transport)} is not supported (fd3, stdio)\n`);
    exit(2);
  }
  if (transport === 'stdio') {
    try {
      stdioChannel();
    } catch (err) {
      process.stderr.write(`tether-node: the stdio transport needs stdin and stdout that /proc can reopen: ${err.message}\n`);
      exit(2);
    }
  }
  const args = process.argv.slice(2);
  const cwd = args.indexOf('--cwd');
  if (cwd >= 0) process.chdir(args[cwd + 1]);
  // The program sees the argv of a script run with no arguments, the script
  // named as in its tracebacks: the guest's own script and options are not its.
  process.argv = [process.execPath, FILENAME];
  send(TYPES.HELLO, {
    protocol: PROTOCOL_VERSION,
    implementation: `tether-node/${VERSION} node/${process.versions.node}`,
    languages: LANGUAGES,
    capabilities: [],
  });
  const socket = new net.Socket({ fd: channel.read, readable: true, writable: false, onread: reads(onData) });
  socket.on('end', onEof);
  socket.on('error', onEof);
  channel.socket = socket;
  prepare();
  if (args.includes('--warm')) {
    state.warming = true;
    setImmediate(warmUp);
  }
}

/**
 * Reads straight into one buffer (`onread`), past Node's stream machinery,
 * which costs a binding call much of its time. The buffer is reused, so each chunk is copied.
 */
function reads(callback) {
  const buffer = Buffer.allocUnsafe(65536);
  return { buffer, callback: (length) => { callback(TypedArrayPrototypeSlice(buffer, 0, length)); } };
}

// Built into a startup snapshot (snapshot.mjs), the guest starts at main()
// when the snapshot is deserialized, its modules loaded and its own code
// compiled.
if (v8.startupSnapshot.isBuildingSnapshot()) {
  for (const step of codeSteps()) step();
  v8.startupSnapshot.setDeserializeMainFunction(main);
} else {
  main();
}
