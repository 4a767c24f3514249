// A program's error as DONE tells it (R-DONE-2, R-DONE-6, R-DONE-7): its type,
// message, line and own frames, fitted to DONE; and the errors a binding call
// raises in the program (R-RESULT-5, R-CANCEL-2).

import { inspect } from 'node:util';
import { encodePayload } from './codec.mjs';
import { programColumn, syntaxContext } from './compile.mjs';
import {
  ArrayPrototypeFilter, ArrayPrototypeJoin, ArrayPrototypeMap, ArrayPrototypePush, BufferByteLength,
  ErrorCaptureStackTrace, ErrorCtor, MathMax, NumberCtor, ObjectAssign, ObjectGetPrototypeOf,
  ObjectHasOwn, ObjectPrototypeToString, RegExpPrototypeExec, StringCtor, StringPrototypeSlice,
  StringPrototypeSplit, StringPrototypeToWellFormed, TextDecoderPrototypeDecode,
  TextEncoderPrototypeEncode, TypedArrayPrototypeSubarray,
} from './primordials.mjs';

/**
 * A binding call that failed on the host (R-RESULT-5): `type`, `message` and
 * `code` as sent, `binding` the binding's name. Uncaught, it ends the run
 * with the message `TYPE: MESSAGE` (`text`).
 */
export class BindingError extends Error {
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
export class Cancelled extends Error {
  constructor(reason) {
    super(`the run was cancelled: ${reason}`);
    this.name = 'Cancelled';
  }
}

/**
 * `error`, its stack taken again from below `above` (a function on the stack):
 * the program's `e.stack` shows its own frames, not the guest's and its path.
 */
export function fromProgram(error, above) {
  ErrorCaptureStackTrace(error, above);
  return error;
}

/**
 * The program's own frames only (R-DONE-2), with columns of line 1 unshifted.
 * `compiling`: the error is the program's own syntax error, shown at its line.
 */
export function describe(err, compiling = false) {
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
export function shown(value) {
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
export function errorType(err) {
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

const MAX_ERROR_TYPE_BYTES = 256;

/**
 * R-DONE-7: valid text in every field, and a DONE payload within `budget`
 * bytes: the traceback is shortened first, then the message.
 */
export function fitError(error, budget) {
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
export function cut(text, limit) {
  const bytes = TextEncoderPrototypeEncode(utf8Encoder, text);
  if (bytes.length <= limit) return text;
  if (limit < 3) return '';
  let end = limit - 3;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1; // not inside a character
  return `${TextDecoderPrototypeDecode(utf8Decoder, TypedArrayPrototypeSubarray(bytes, 0, end))}\u2026`;
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();
