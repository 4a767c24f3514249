// tether wire codec for JavaScript (spec §4-§9): frames, strict CBOR
// payloads, message schemas and the guest's side of the state table.
// Sans-IO: bytes in, messages out; messages in, bytes out. What runs while
// a program runs uses the built-ins taken at start (primordials.mjs, R-JS-4).

import {
  ArrayIsArray, ArrayPrototypeJoin, ArrayPrototypeMap, ArrayPrototypePop, ArrayPrototypePush,
  ArrayPrototypeShift, BigIntCtor, BigIntPrototypeToString, BufferByteLength, DataViewCtor, DataViewPrototypeGetBigUint64, DataViewPrototypeGetFloat32,
  DataViewPrototypeGetFloat64, DataViewPrototypeGetUint16, DataViewPrototypeGetUint32,
  DataViewPrototypeSetBigUint64, DataViewPrototypeSetFloat32, DataViewPrototypeSetFloat64,
  DataViewPrototypeSetUint16, DataViewPrototypeSetUint32, ErrorCtor, MapCtor, MapPrototypeGet,
  MapPrototypeHas, MapPrototypeSet, MathAbs,
  MathFloor, MathFround, MathLog2, MathMax, MathMin, NumberCtor, NumberIsFinite, NumberIsInteger,
  NumberIsNaN, NumberIsSafeInteger, NumberMaxSafeInteger, ObjectIs, ObjectKeys, RegExpPrototypeExec,
  SafeMap, SafeSet, SafeWeakMap, StringPrototypeCharCodeAt, StringPrototypeStartsWith,
  TextDecoderPrototypeDecode, TextEncoderPrototypeEncodeInto, TypedArrayPrototypeSet,
  TypedArrayPrototypeSubarray, Uint8ArrayCtor, mapKeys,
} from './primordials.mjs';

export const MAGIC = [0x54, 0x48];
export const VERSION = 1;
export const HEADER_SIZE = 10;
export const PROTOCOL_VERSION = 1;
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_DEPTH = 64;
export const ENVELOPE_DEPTH = 2;
/** Bytes a frame's envelope may add to the value it carries (spec §10). */
export const ENVELOPE_OVERHEAD = 1024;
/** Containers a frame of this type puts around its value (R-CBOR-8). */
export const envelopeDepth = (type) => (type === 4 || type === 6 ? 1 : ENVELOPE_DEPTH);
export const MAX_CALL_ID = 2 ** 53 - 1;
export const DEFAULT_VALUE_BYTES = 8 * 1024 * 1024;
/** Data items a frame's envelope may add to its value's (R-CBOR-11). */
export const ENVELOPE_ITEMS = 64;
/** RUN.limits' ranges (spec §10), as codec/frames.py and codec/values.py hold them. */
export const MIN_MAX_FRAME_BYTES = 64 * 1024;
export const MAX_PAYLOAD_LENGTH = 2 ** 32 - 1;
export const MIN_MAX_DEPTH = 16;
export const MAX_MAX_DEPTH = 512;
export const BYTES_PER_ITEM = 16;
export const MIN_VALUE_ITEMS = 1024;

/** The most data items one value may hold (spec §10, `value_items`). */
export function valueItems(valueBytes) {
  return MathMax(MIN_VALUE_ITEMS, MathFloor(valueBytes / BYTES_PER_ITEM));
}

/**
 * How many data items `bytes` holds, counting no further than `limit + 1`;
 * a tag and its content count as one. Reads only the heads; a malformed
 * payload just ends the count (the decoder then says what is wrong).
 */
export function countItems(bytes, limit) {
  const view = new DataViewCtor(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  let count = 0;
  let remaining = 1;
  while (remaining > 0 && pos < bytes.length) {
    const initial = bytes[pos];
    const major = initial >> 5;
    const info = initial & 0x1f;
    let argument;
    if (info < 24) { argument = info; pos += 1; }
    else if (info === 24) { argument = bytes[pos + 1]; pos += 2; }
    else if (info === 25) { if (pos + 3 > bytes.length) return count; argument = DataViewPrototypeGetUint16(view, pos + 1); pos += 3; }
    else if (info === 26) { if (pos + 5 > bytes.length) return count; argument = DataViewPrototypeGetUint32(view, pos + 1); pos += 5; }
    else if (info === 27) { if (pos + 9 > bytes.length) return count; argument = NumberCtor(DataViewPrototypeGetBigUint64(view, pos + 1)); pos += 9; }
    else return count; // indefinite or reserved: malformed
    remaining -= 1;
    if (major === 6) { remaining += 1; continue; } // the tag's content is the item
    count += 1;
    if (count > limit) return count;
    if (major === 2 || major === 3) pos += argument;
    else if (major === 4) remaining += argument;
    else if (major === 5) remaining += 2 * argument;
  }
  return count;
}

/** Whether a value encoded in `payload` inside `envelopeItems` items of envelope holds too many (R-VAL-1). */
export function exceedsValueItems(payload, valueBytes, envelopeItems) {
  const limit = valueItems(valueBytes) + envelopeItems;
  return payload.length > limit && countItems(payload, limit) > limit;
}

/**
 * How the value encoded in `payload` exceeds `valueBytes` (R-VAL-1), or null: the value is
 * `payload` less `envelopeBytes` of envelope holding `envelopeItems` items (negative: the
 * envelope it will have is not in `payload` yet). The twin of codec/values.py value_excess.
 */
export function valueExcess(payload, valueBytes, envelopeBytes, envelopeItems) {
  const size = payload.length - envelopeBytes;
  if (size > valueBytes) return { kind: 'bytes', amount: size };
  if (exceedsValueItems(payload, valueBytes, envelopeItems)) {
    return { kind: 'items', amount: valueItems(valueBytes) };
  }
  return null;
}

export const TYPES = Object.freeze({
  HELLO: 1, RUN: 2, CALL: 3, RESULT: 4, OUTPUT: 5, DONE: 6, CANCEL: 7, ERROR: 8,
});
const TYPE_NAMES = Object.fromEntries(Object.entries(TYPES).map(([k, v]) => [v, k]));

/**
 * The connection state table (spec §8), the twin of codec/state.py (a test checks they
 * agree): `${state} ${sender} ${frame type}` -> the next state. A frame missing from it
 * is UNEXPECTED_MESSAGE.
 */
export const TRANSITIONS = (() => {
  const table = new SafeMap();
  const add = (state, sender, type, next) => table.set(`${state} ${sender} ${type}`, next);
  add('AWAIT_HELLO', 'guest', 'HELLO', 'AWAIT_RUN');
  add('AWAIT_RUN', 'host', 'RUN', 'RUNNING');
  for (const state of ['RUNNING', 'CANCELLING']) {
    add(state, 'guest', 'CALL', state);
    add(state, 'guest', 'OUTPUT', state);
    add(state, 'host', 'RESULT', state);
    add(state, 'guest', 'DONE', 'FINISHED');
  }
  add('RUNNING', 'host', 'CANCEL', 'CANCELLING');
  add('FINISHED', 'host', 'RESULT', 'FINISHED'); // already on their way (R-STATE-4)
  add('FINISHED', 'host', 'CANCEL', 'FINISHED');
  for (const state of ['AWAIT_HELLO', 'AWAIT_RUN', 'RUNNING', 'CANCELLING', 'FINISHED']) {
    for (const sender of ['host', 'guest']) {
      // ERROR from either side but CLOSED, except from the guest after DONE (R-ERR-1, R-DONE-4)
      if (state !== 'FINISHED' || sender !== 'guest') add(state, sender, 'ERROR', 'CLOSED');
    }
  }
  return table;
})();

/** The state after `sender` sends a frame of type `typeName` in `state`, or undefined. */
export const nextState = (state, sender, typeName) => TRANSITIONS.get(`${state} ${sender} ${typeName}`);

export const CODES = Object.freeze({
  FRAME_MALFORMED: 1, UNSUPPORTED_VERSION: 2, UNKNOWN_TYPE: 3, FRAME_TOO_LARGE: 4,
  MALFORMED_PAYLOAD: 5, INVALID_MESSAGE: 6, UNEXPECTED_MESSAGE: 7, INVALID_CALL_ID: 8,
  TRUNCATED: 9, LANGUAGE_UNSUPPORTED: 10, INTERNAL_ERROR: 11,
  BINDING_ERROR: 100, UNKNOWN_BINDING: 101, INVALID_VALUE: 102, VALUE_TOO_LARGE: 103,
  TOO_MANY_CALLS: 104, CALL_TIMEOUT: 105, CANCELLED: 106,
});
const CODE_NAMES = Object.fromEntries(Object.entries(CODES).map(([k, v]) => [v, k]));

/** A protocol violation; `code` is the ERROR frame's code (spec §9). */
export class ProtocolError extends ErrorCtor {
  constructor(code, message) {
    super(`${CODE_NAMES[code]}: ${message}`);
    this.name = 'ProtocolError';
    this.code = code;
    this.detail = message;
  }
}

// ---- frames (spec §4) ------------------------------------------------------

export function encodeFrame(type, payload) {
  const frame = new Uint8ArrayCtor(HEADER_SIZE + payload.length);
  TypedArrayPrototypeSet(frame, frameHeader(type, payload.length), 0);
  TypedArrayPrototypeSet(frame, payload, HEADER_SIZE);
  return frame;
}

/** The header alone, to write a large payload after it without a copy. */
export function frameHeader(type, length) {
  const header = new Uint8ArrayCtor(HEADER_SIZE);
  const view = new DataViewCtor(header.buffer);
  header[0] = MAGIC[0];
  header[1] = MAGIC[1];
  header[2] = VERSION;
  header[3] = type;
  DataViewPrototypeSetUint16(view, 4, 0);
  DataViewPrototypeSetUint32(view, 6, length);
  return header;
}

/** Incremental decoder: push(bytes), then next() until it returns null. */
export class FrameDecoder {
  constructor(maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {
    this.maxFrameBytes = maxFrameBytes;
    this.chunks = [];
    this.length = 0;
    this.pending = null; // [type, length] once a header passed its checks
  }

  push(bytes) {
    if (bytes.length) {
      ArrayPrototypePush(this.chunks, bytes);
      this.length += bytes.length;
    }
  }

  take(n) {
    const out = new Uint8ArrayCtor(n);
    let filled = 0;
    while (filled < n) {
      const head = this.chunks[0];
      const used = MathMin(head.length, n - filled);
      TypedArrayPrototypeSet(out, TypedArrayPrototypeSubarray(head, 0, used), filled);
      filled += used;
      if (used === head.length) ArrayPrototypeShift(this.chunks);
      else this.chunks[0] = TypedArrayPrototypeSubarray(head, used);
    }
    this.length -= n;
    return out;
  }

  next() {
    if (this.pending === null) {
      if (this.length < HEADER_SIZE) return null;
      this.pending = checkHeader(this.take(HEADER_SIZE), this.maxFrameBytes);
    }
    const type = this.pending[0];
    const length = this.pending[1];
    if (this.length < length) return null;
    this.pending = null;
    return { type, payload: this.take(length) };
  }

  checkEof() {
    if (this.pending !== null || this.length > 0) {
      throw new ProtocolError(CODES.TRUNCATED, `stream ended inside a frame`);
    }
  }
}

export function checkHeader(header, maxFrameBytes) {
  const view = new DataViewCtor(header.buffer, header.byteOffset, HEADER_SIZE);
  if (header[0] !== MAGIC[0] || header[1] !== MAGIC[1]) {
    throw new ProtocolError(CODES.FRAME_MALFORMED, 'bad magic');
  }
  if (header[2] !== VERSION) {
    throw new ProtocolError(CODES.UNSUPPORTED_VERSION, `frame version ${header[2]}`);
  }
  if (DataViewPrototypeGetUint16(view, 4) !== 0) {
    throw new ProtocolError(CODES.FRAME_MALFORMED, 'reserved flags set');
  }
  const length = DataViewPrototypeGetUint32(view, 6);
  if (length > maxFrameBytes) {
    throw new ProtocolError(CODES.FRAME_TOO_LARGE,
      `declared payload of ${length} bytes exceeds the ceiling of ${maxFrameBytes}`);
  }
  const type = header[3];
  if (type < 0x80 && !(type in TYPE_NAMES)) {
    throw new ProtocolError(CODES.UNKNOWN_TYPE, `reserved frame type ${type}`);
  }
  return [type, length];
}

// ---- payloads (spec §5) -------------------------------------------------------

const MAX_UINT64 = 2n ** 64n - 1n;
const TEXT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * One strict CBOR item → wire value (Maps for maps, bigint/number for ints),
 * enforcing R-CBOR-1..8 as it reads. npm cbor2's `decode` with the strict
 * options gives the same values (test/decode.test.mjs checks it against this
 * one), but its set-up per payload (it copies its options twice) is most of a
 * binding call's time (figures: bench/README.md).
 */
export function decodePayload(payload, maxDepth = DEFAULT_MAX_DEPTH + ENVELOPE_DEPTH,
  maxItems = valueItems(DEFAULT_VALUE_BYTES) + ENVELOPE_ITEMS) {
  if (payload.length > maxItems && countItems(payload, maxItems) > maxItems) {
    throw new ProtocolError(CODES.MALFORMED_PAYLOAD, `more than ${maxItems} data items`);
  }
  const reader = new Reader(payload);
  const value = reader.item(maxDepth);
  if (reader.pos !== payload.length) reader.fail('bytes after the item');
  return value;
}

// The keys of a decoded map that held a float: a Number cannot tell 1.0 from 1,
// and a message's integer fields must be integers (Fields.uint).
const FLOAT_KEYS = new SafeWeakMap();

function floatKeys(map) {
  let keys = FLOAT_KEYS.get(map);
  if (keys === undefined) FLOAT_KEYS.set(map, (keys = new SafeSet()));
  return keys;
}

/** Whether an item's initial byte starts a float (f16, f32, f64). */
function isFloatHead(initial) {
  return initial >= 0xf9 && initial <= 0xfb;
}

class Reader {
  constructor(bytes) {
    this.bytes = bytes;
    this.view = new DataViewCtor(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = 0;
    this.trail = []; // map keys and array indexes down to the item being read
  }

  fail(problem) {
    const path = ArrayPrototypeJoin(ArrayPrototypeMap(this.trail,
      (p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)), '');
    throw new ProtocolError(CODES.MALFORMED_PAYLOAD, `$${path}: ${problem}`);
  }

  need(n) {
    if (this.bytes.length - this.pos < n) this.fail('the payload ends inside the item');
  }

  /** The argument of an initial byte: shortest form only, definite only. */
  argument(info) {
    if (info < 24) return info;
    let value;
    let least;
    switch (info) {
      case 24: this.need(1); value = this.bytes[this.pos]; this.pos += 1; least = 24; break;
      case 25: this.need(2); value = DataViewPrototypeGetUint16(this.view, this.pos); this.pos += 2; least = 0x100; break;
      case 26: this.need(4); value = DataViewPrototypeGetUint32(this.view, this.pos); this.pos += 4; least = 0x10000; break;
      case 27: {
        this.need(8);
        const big = DataViewPrototypeGetBigUint64(this.view, this.pos);
        this.pos += 8;
        if (big <= 0xffffffffn) this.fail(`${big} not in its shortest form`);
        return big <= NumberMaxSafeInteger ? NumberCtor(big) : big;
      }
      case 31: return this.fail('indefinite length');
      default: return this.fail(`reserved additional information ${info}`);
    }
    if (value < least) this.fail(`${value} not in its shortest form`);
    return value;
  }

  /** A length that the rest of the payload can hold (items take a byte or more). */
  length(info, itemBytes) {
    const n = this.argument(info);
    if (typeof n === 'bigint' || n * itemBytes > this.bytes.length - this.pos) {
      this.fail('the payload ends inside the item');
    }
    return n;
  }

  item(depthLeft) {
    this.need(1);
    const initial = this.bytes[this.pos];
    this.pos += 1;
    const major = initial >> 5;
    const info = initial & 0x1f;
    switch (major) {
      case 0: return this.argument(info);
      case 1: {
        const n = this.argument(info);
        // -2 ** 53 is past Number's exact integers: a BigInt, as any below it.
        return typeof n === 'bigint' || n === NumberMaxSafeInteger ? -1n - BigIntCtor(n) : -1 - n;
      }
      case 2: {
        const n = this.length(info, 1);
        this.pos += n;
        // A copy: a view would show the rest of the frame through its .buffer (§6.1).
        return new Uint8ArrayCtor(TypedArrayPrototypeSubarray(this.bytes, this.pos - n, this.pos));
      }
      case 3: return this.text(info);
      case 4: {
        if (depthLeft <= 0) this.fail('nested too deeply');
        const n = this.length(info, 1);
        const out = [];
        ArrayPrototypePush(this.trail, 0);
        for (let i = 0; i < n; i++) {
          this.trail[this.trail.length - 1] = i;
          out[i] = this.item(depthLeft - 1);
        }
        ArrayPrototypePop(this.trail);
        return out;
      }
      case 5: return this.map(info, depthLeft);
      case 6: return this.bignum(info);
      default: return this.simple(info);
    }
  }

  text(info) {
    const n = this.length(info, 1);
    this.pos += n;
    try {
      return TextDecoderPrototypeDecode(TEXT, TypedArrayPrototypeSubarray(this.bytes, this.pos - n, this.pos));
    } catch {
      return this.fail('text is not valid UTF-8');
    }
  }

  map(info, depthLeft) {
    if (depthLeft <= 0) this.fail('nested too deeply');
    const n = this.length(info, 2);
    const out = new MapCtor(); // keys in the sender's order (R-CBOR-2)
    for (let i = 0; i < n; i++) {
      this.need(1);
      const initial = this.bytes[this.pos];
      if (initial >> 5 !== 3) this.fail('map key is not text');
      this.pos += 1;
      const key = this.text(initial & 0x1f);
      if (MapPrototypeHas(out, key)) this.fail(`key "${key}" repeated`);
      ArrayPrototypePush(this.trail, key);
      // Only the envelope's maps and those one level in (limits, error) hold fields.
      const float = this.trail.length <= 2 && isFloatHead(this.bytes[this.pos]);
      MapPrototypeSet(out, key, this.item(depthLeft - 1));
      if (float) floatKeys(out).add(key);
      ArrayPrototypePop(this.trail);
    }
    return out;
  }

  bignum(info) {
    const tag = this.argument(info);
    if (tag !== 2 && tag !== 3) return this.fail(`tag ${tag} is not allowed`);
    this.need(1);
    if (this.bytes[this.pos] >> 5 !== 2) this.fail('bignum contents are not a byte string');
    const bytes = this.item(0);
    if (bytes.length === 0 || bytes[0] === 0) this.fail('bignum with a leading zero');
    let hex = '0x';
    for (let i = 0; i < bytes.length; i++) hex += HEX_DIGITS[bytes[i] >> 4] + HEX_DIGITS[bytes[i] & 0xf];
    const magnitude = BigIntCtor(hex);
    if (magnitude <= MAX_UINT64) this.fail('bignum fits in 64 bits');
    return tag === 2 ? magnitude : -1n - magnitude;
  }

  simple(info) {
    let value;
    let size;
    switch (info) {
      case 20: return false;
      case 21: return true;
      case 22: return null;
      case 25: {
        this.need(2);
        const bits = DataViewPrototypeGetUint16(this.view, this.pos);
        if (bits !== 0x7e00 && (bits & 0x7c00) === 0x7c00 && (bits & 0x3ff) !== 0) {
          this.fail('NaN not encoded as f97e00');
        }
        value = half(bits);
        size = 3;
        break;
      }
      case 26: this.need(4); value = DataViewPrototypeGetFloat32(this.view, this.pos); size = 5; break;
      case 27: this.need(8); value = DataViewPrototypeGetFloat64(this.view, this.pos); size = 9; break;
      case 23: return this.fail('undefined is not allowed');
      case 31: return this.fail('indefinite length');
      default: return this.fail(`simple value ${info < 24 ? info : 'in two bytes'} is not allowed`);
    }
    this.pos += size - 1;
    if (floatSize(value) !== size) this.fail(`float ${value} not in its shortest form`);
    return value;
  }
}

/** IEEE 754 binary16 bits → number. */
function half(bits) {
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  let magnitude;
  if (exponent === 0) magnitude = fraction * 2 ** -24;
  else if (exponent === 31) magnitude = fraction === 0 ? Infinity : NaN;
  else magnitude = (fraction + 1024) * 2 ** (exponent - 25);
  return bits & 0x8000 ? -magnitude : magnitude;
}

/** Bytes of the shortest IEEE 754 encoding (f16, f32, f64) holding `n` exactly. */
function floatSize(n) {
  if (NumberIsNaN(n) || n === 0 || !NumberIsFinite(n)) return 3;
  if (MathFround(n) !== n) return 9;
  const magnitude = MathAbs(n);
  if (magnitude <= 65504 && magnitude >= 2 ** -24) {
    const exponent = MathMax(MathFloor(MathLog2(magnitude)), -14);
    if (NumberIsInteger(magnitude * 2 ** (10 - exponent))) return 3;
  }
  return 5;
}


/**
 * Preferred serialization of a wire value, every map in its own order
 * (R-CBOR-2): shortest heads, integers as integers (bignums past 64 bits),
 * other numbers in the shortest float width that holds them exactly, NaN as
 * f97e00 (R-CBOR-5). Each map key's encoding is cached (records repeat
 * their keys).
 */
export function encodePayload(item) {
  const writer = new Writer();
  writeWire(item, writer);
  return writer.read();
}

/** Bytes already encoded (by encodePayload), written as they are. */
export class Encoded {
  constructor(bytes) {
    this.bytes = bytes;
  }
}

/** A growing byte buffer. */
class Writer {
  constructor(size = 256) {
    this.buf = new Uint8ArrayCtor(size);
    this.view = new DataViewCtor(this.buf.buffer);
    this.length = 0;
  }

  reserve(n) {
    if (this.length + n <= this.buf.length) return;
    const grown = new Uint8ArrayCtor(MathMax(this.buf.length * 2, this.length + n));
    TypedArrayPrototypeSet(grown, TypedArrayPrototypeSubarray(this.buf, 0, this.length));
    this.buf = grown;
    this.view = new DataViewCtor(grown.buffer);
  }

  byte(b) {
    this.reserve(1);
    this.buf[this.length++] = b;
  }

  bytes(u8) {
    this.reserve(u8.length);
    TypedArrayPrototypeSet(this.buf, u8, this.length);
    this.length += u8.length;
  }

  read() {
    return TypedArrayPrototypeSubarray(this.buf, 0, this.length);
  }
}

const MAJOR_UINT = 0;
const MAJOR_NINT = 1;
const MAJOR_BYTES = 2;
const MAJOR_TEXT = 3;
const MAJOR_ARRAY = 4;
const MAJOR_MAP = 5;
const TAG_POS_BIGNUM = 0xc2;
const TAG_NEG_BIGNUM = 0xc3;
const U32_MAX = 0xffffffff;
const U32_MAX_BIG = BigIntCtor(U32_MAX);
const U64_MAX = 0xffffffffffffffffn;

/** A head: major type and its argument (a number up to 2^53, or a bigint up to 2^64-1). */
function writeHead(major, n, w) {
  const m = major << 5;
  if (typeof n === 'bigint' ? n > U32_MAX_BIG : n > U32_MAX) {
    w.reserve(9);
    w.buf[w.length] = m | 27;
    DataViewPrototypeSetBigUint64(w.view, w.length + 1, BigIntCtor(n));
    w.length += 9;
    return;
  }
  const v = NumberCtor(n);
  if (v < 24) {
    w.byte(m | v);
  } else if (v <= 0xff) {
    w.reserve(2);
    w.buf[w.length] = m | 24;
    w.buf[w.length + 1] = v;
    w.length += 2;
  } else if (v <= 0xffff) {
    w.reserve(3);
    w.buf[w.length] = m | 25;
    DataViewPrototypeSetUint16(w.view, w.length + 1, v);
    w.length += 3;
  } else {
    w.reserve(5);
    w.buf[w.length] = m | 26;
    DataViewPrototypeSetUint32(w.view, w.length + 1, v);
    w.length += 5;
  }
}

function writeBigInt(value, w) {
  const negative = value < 0n;
  const n = negative ? -value - 1n : value;
  if (n <= U64_MAX) {
    writeHead(negative ? MAJOR_NINT : MAJOR_UINT, n, w);
    return;
  }
  const hex = BigIntPrototypeToString(n, 16);
  const digits = hex.length % 2 ? `0${hex}` : hex;
  const bytes = new Uint8ArrayCtor(digits.length / 2);
  for (let i = 0; i < bytes.length; i++) {
    bytes[i] = (hexValue(StringPrototypeCharCodeAt(digits, 2 * i)) << 4)
      | hexValue(StringPrototypeCharCodeAt(digits, 2 * i + 1));
  }
  w.byte(negative ? TAG_NEG_BIGNUM : TAG_POS_BIGNUM);
  writeHead(MAJOR_BYTES, bytes.length, w);
  w.bytes(bytes);
}

const bits = new DataViewCtor(new ArrayBuffer(8));
const HEX_DIGITS = '0123456789abcdef';
/** The value of a lowercase hex digit's character code. */
const hexValue = (code) => (code <= 0x39 ? code - 0x30 : code - 0x57);

/** The binary16 bits of `v` (a binary32 value, not NaN) if it has them exactly, else null. */
function halfBits(v) {
  const sign = v < 0 || ObjectIs(v, -0) ? 0x8000 : 0;
  const a = MathAbs(v);
  if (a === 0) return sign;
  if (a === Infinity) return sign | 0x7c00;
  DataViewPrototypeSetFloat64(bits, 0, a);
  const exponent = ((DataViewPrototypeGetUint32(bits, 0) >>> 20) & 0x7ff) - 1023;
  if (exponent >= -14 && exponent <= 15) {
    const significand = a * 2 ** (10 - exponent); // exact: a power-of-two scale
    return NumberIsInteger(significand) ? sign | ((exponent + 15) << 10) | (significand - 1024) : null;
  }
  if (exponent >= -24 && exponent < -14) {
    const subnormal = a * 2 ** 24;
    return NumberIsInteger(subnormal) ? sign | subnormal : null;
  }
  return null;
}

function writeFloat(v, w) {
  if (NumberIsNaN(v)) {
    w.bytes(CANONICAL_NAN);
    return;
  }
  if (MathFround(v) === v) {
    const half = halfBits(v);
    if (half !== null) {
      w.reserve(3);
      w.buf[w.length] = 0xf9;
      DataViewPrototypeSetUint16(w.view, w.length + 1, half);
      w.length += 3;
    } else {
      w.reserve(5);
      w.buf[w.length] = 0xfa;
      DataViewPrototypeSetFloat32(w.view, w.length + 1, v);
      w.length += 5;
    }
    return;
  }
  w.reserve(9);
  w.buf[w.length] = 0xfb;
  DataViewPrototypeSetFloat64(w.view, w.length + 1, v);
  w.length += 9;
}

const CANONICAL_NAN = new Uint8ArrayCtor([0xf9, 0x7e, 0x00]);

function writeNumber(v, w) {
  if (NumberIsSafeInteger(v) && !ObjectIs(v, -0)) {
    if (v >= 0) writeHead(MAJOR_UINT, v, w);
    else writeHead(MAJOR_NINT, -v - 1, w);
  } else {
    writeFloat(v, w);
  }
}

const utf8 = new TextEncoder();

/** UTF-8 straight into the buffer (a lone surrogate becomes U+FFFD, as TextEncoder does). */
function writeText(text, w) {
  const length = BufferByteLength(text, 'utf8');
  writeHead(MAJOR_TEXT, length, w);
  w.reserve(length);
  const { written } = TextEncoderPrototypeEncodeInto(utf8, text,
    TypedArrayPrototypeSubarray(w.buf, w.length, w.length + length));
  w.length += written;
}

const KEY_CACHE_SIZE = 4096;
const keyCache = new SafeMap(); // map key -> its encoding

function encodedKey(key) {
  let bytes = keyCache.get(key);
  if (bytes === undefined) {
    const writer = new Writer(key.length * 3 + 9);
    writeText(key, writer);
    bytes = writer.read();
    if (keyCache.size < KEY_CACHE_SIZE) keyCache.set(key, bytes);
  }
  return bytes;
}

function writeWire(value, w) {
  if (value === null) {
    w.byte(0xf6);
  } else if (value === true || value === false) {
    w.byte(value ? 0xf5 : 0xf4);
  } else if (typeof value === 'number') {
    writeNumber(value, w);
  } else if (typeof value === 'bigint') {
    writeBigInt(value, w);
  } else if (typeof value === 'string') {
    writeText(value, w);
  } else if (value instanceof Uint8ArrayCtor) {
    writeHead(MAJOR_BYTES, value.length, w);
    w.bytes(value);
  } else if (ArrayIsArray(value)) {
    writeHead(MAJOR_ARRAY, value.length, w);
    for (let i = 0; i < value.length; i++) writeWire(value[i], w);
  } else if (value instanceof Encoded) {
    w.bytes(value.bytes);
  } else if (value instanceof MapCtor || typeof value === 'object') {
    const isMap = value instanceof MapCtor;
    const keys = isMap ? mapKeys(value) : ObjectKeys(value);
    writeHead(MAJOR_MAP, keys.length, w);
    for (let i = 0; i < keys.length; i++) {
      w.bytes(encodedKey(keys[i]));
      writeWire(isMap ? MapPrototypeGet(value, keys[i]) : value[keys[i]], w);
    }
  } else {
    throw new TypeError(`not a wire value: ${typeof value}`);
  }
}

// ---- messages (spec §7, tether.cddl) ---------------------------------------------

function invalid(message) {
  return new ProtocolError(CODES.INVALID_MESSAGE, message);
}

class Fields {
  constructor(map, what) {
    if (!(map instanceof MapCtor)) throw invalid(`${what} payload is not a map`);
    this.map = map;
    this.what = what;
    this.seen = new SafeSet();
  }

  has(key) {
    return MapPrototypeHas(this.map, key);
  }

  get(key, check, kind, optional = false) {
    this.seen.add(key);
    if (!MapPrototypeHas(this.map, key)) {
      if (optional) return undefined;
      throw invalid(`${this.what} lacks "${key}"`);
    }
    const value = MapPrototypeGet(this.map, key);
    if (!check(value)) throw invalid(`${this.what}.${key} must be ${kind}`);
    return value;
  }

  text(key, optional = false) {
    return this.get(key, (v) => typeof v === 'string', 'text', optional);
  }

  uint(key, { min = 0, max = MAX_UINT64, optional = false } = {}) {
    const float = FLOAT_KEYS.get(this.map)?.has(key);
    const value = this.get(key, (v) => !float && (NumberIsSafeInteger(v) || typeof v === 'bigint'),
      'an integer', optional);
    if (value === undefined) return undefined;
    const big = BigIntCtor(value);
    if (big < BigIntCtor(min) || big > BigIntCtor(max)) throw invalid(`${this.what}.${key} out of range`);
    return value;
  }

  texts(key, nonEmpty = false) {
    const value = this.get(key, (v) => Array.isArray(v) && v.every((s) => typeof s === 'string'),
      'an array of text');
    if (nonEmpty && value.length === 0) throw invalid(`${this.what}.${key} must not be empty`);
    return value;
  }

  any(key) {
    return this.get(key, () => true, 'a value');
  }

  done() {
    const keys = mapKeys(this.map);
    for (let i = 0; i < keys.length; i++) {
      if (!this.seen.has(keys[i])) throw invalid(`${this.what} has unknown key "${keys[i]}"`);
    }
  }
}

const BINDING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LIMIT_FIELDS = ['output_bytes', 'value_bytes', 'frame_bytes', 'max_depth',
  'max_calls_in_flight'];
const RESOURCE_FIELDS = ['memory_bytes', 'cpu_seconds', 'open_files', 'file_bytes', 'processes',
  'variables_bytes'];
const MAX_VARIABLES_BYTES = 4 * 1024 * 1024;

/** Why `name` cannot be a variable in RUN (R-VARS-1), or null. */
export function variableNameProblem(name) {
  if (RegExpPrototypeExec(BINDING_NAME, name) === null) return 'is not an identifier of [A-Za-z_][A-Za-z0-9_]*';
  if (StringPrototypeStartsWith(name, '_')) return 'is private (starts with _)';
  return null;
}

function callError(map, what, fatal) {
  const f = new Fields(map, what);
  const code = f.uint('code');
  const type = fatal ? undefined : f.text('type');
  const message = f.text('message');
  f.done();
  const known = CODE_NAMES[code] !== undefined && (NumberCtor(code) < 100) === fatal;
  if (!known) throw invalid(`${what}.code ${code} is not a ${fatal ? 'connection' : 'call'} code`);
  return fatal ? { code: NumberCtor(code), message } : { code: NumberCtor(code), type, message };
}

const PARSERS = {
  [TYPES.HELLO](f) {
    return { protocol: f.uint('protocol'), implementation: f.text('implementation'),
      languages: f.texts('languages', true), capabilities: f.texts('capabilities') };
  },
  [TYPES.RUN](f) {
    const bindings = f.get('bindings', Array.isArray, 'an array').map((b) => {
      const g = new Fields(b, 'RUN.bindings[]');
      const binding = { name: g.text('name'), signature: g.text('signature', true),
        doc: g.text('doc', true) };
      g.done();
      if (!BINDING_NAME.test(binding.name)) throw invalid(`binding name ${binding.name}`);
      return binding;
    });
    if (new Set(bindings.map((b) => b.name)).size !== bindings.length) {
      throw invalid('RUN.bindings repeats a name');
    }
    const g = new Fields(f.get('limits', (v) => v instanceof Map, 'a map'), 'RUN.limits');
    const limits = {};
    for (const k of LIMIT_FIELDS) limits[k] = Number(g.uint(k));
    for (const k of RESOURCE_FIELDS) {
      const v = g.uint(k, { optional: true });
      if (v !== undefined) limits[k] = Number(v);
    }
    g.done();
    if (limits.frame_bytes < MIN_MAX_FRAME_BYTES || limits.frame_bytes > MAX_PAYLOAD_LENGTH
        || limits.max_depth < MIN_MAX_DEPTH || limits.max_depth > MAX_MAX_DEPTH
        || limits.value_bytes < 1 || limits.value_bytes > limits.frame_bytes - ENVELOPE_OVERHEAD
        || limits.max_calls_in_flight < 1) {
      throw invalid('RUN.limits outside the allowed ranges');
    }
    const run = { source: f.text('source'), language: f.text('language'), bindings, limits };
    const variables = f.get('variables', (v) => v instanceof Map, 'a map', true);
    const last = f.get('last_expression', (v) => typeof v === 'boolean', 'a boolean', true);
    if ((variables === undefined) !== (limits.variables_bytes === undefined)
        || limits.variables_bytes > MAX_VARIABLES_BYTES) {
      throw invalid('RUN.limits.variables_bytes must be present exactly with variables (R-VARS-1)');
    }
    const names = new Set(bindings.map((b) => b.name));
    for (const name of variables?.keys() ?? []) {
      const problem = variableNameProblem(name) ?? (names.has(name) ? 'is the name of a binding' : null);
      if (problem) throw invalid(`RUN.variables: ${JSON.stringify(name)} ${problem}`);
    }
    if (variables !== undefined) run.variables = variables;
    if (last) run.last_expression = true;
    return run;
  },
  [TYPES.CALL](f) {
    return { id: f.uint('id', { min: 1, max: MAX_CALL_ID }), name: f.text('name'),
      args: f.get('args', Array.isArray, 'an array'),
      kwargs: f.get('kwargs', (v) => v instanceof Map, 'a map') };
  },
  [TYPES.RESULT](f) {
    const id = f.uint('id', { min: 1, max: MAX_CALL_ID });
    if (f.has('value') === f.has('error')) throw invalid('RESULT needs value or error');
    if (f.has('error')) return { id, error: callError(f.any('error'), 'RESULT.error', false) };
    return { id, value: f.any('value') };
  },
  [TYPES.OUTPUT](f) {
    const stream = f.text('stream');
    if (stream !== 'stdout' && stream !== 'stderr') throw invalid(`OUTPUT.stream ${stream}`);
    return { stream, text: f.text('text') };
  },
  [TYPES.DONE](f) {
    if (f.has('value') === f.has('error')) throw invalid('DONE needs value or error');
    if (f.has('variables') !== f.has('dropped')) throw invalid('DONE needs variables and dropped');
    const state = {};
    if (f.has('variables')) {
      state.variables = f.get('variables', (v) => v instanceof Map, 'a map');
      state.dropped = f.get('dropped', (v) => v instanceof Map
        && [...v.values()].every((reason) => typeof reason === 'string'), 'a map of text');
    }
    if (f.has('value')) return { value: f.any('value'), ...state };
    const g = new Fields(f.any('error'), 'DONE.error');
    const error = { type: g.text('type'), message: g.text('message'),
      traceback: g.text('traceback'), line: g.uint('line', { optional: true, max: MAX_CALL_ID }),
      code: g.uint('code', { optional: true }) };
    g.done();
    return { error, ...state };
  },
  [TYPES.CANCEL](f) {
    return { reason: f.text('reason') };
  },
  [TYPES.ERROR](f) {
    return callError(f.map, 'ERROR', true);
  },
};

/** Frame → {type, name, body}; raises ProtocolError (MALFORMED_PAYLOAD / INVALID_MESSAGE). */
export function decodeMessage(frame, maxDepth = DEFAULT_MAX_DEPTH, valueBytes = DEFAULT_VALUE_BYTES) {
  const envelope = decodePayload(frame.payload, maxDepth + envelopeDepth(frame.type),
    valueItems(valueBytes) + ENVELOPE_ITEMS);
  const fields = new Fields(envelope, TYPE_NAMES[frame.type]);
  const body = PARSERS[frame.type](fields);
  if (frame.type !== TYPES.ERROR) fields.done();
  return { type: frame.type, name: TYPE_NAMES[frame.type], body };
}

/** Message body (plain JS, Maps for wire maps) → frame bytes. */
export function encodeMessage(type, body) {
  return encodeFrame(type, encodePayload(body));
}
