// The JavaScript codec against the language-neutral test vectors
// (conformance/vectors/frames.json): node --test guest/node/test/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {
  CODES, DEFAULT_MAX_FRAME_BYTES, FrameDecoder, ProtocolError, decodeMessage, decodePayload,
  encodePayload,
} from '../codec.mjs';

const url = new URL('../../../conformance/vectors/frames.json', import.meta.url);
const { vectors } = JSON.parse(fs.readFileSync(url, 'utf8'));

/**
 * Diagnostic notation of a decoded value, as the vectors write it. JavaScript
 * numbers cannot tell 100000.0 from 100000 (spec §6.1): an integral number is
 * written as an integer, and the vector's integral floats are read that way.
 */
function diag(v) {
  if (v === null) return 'null';
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (typeof v === 'number') {
    if (Object.is(v, -0)) return '-0';
    return String(v);
  }
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof Uint8Array) return `h'${Buffer.from(v).toString('hex')}'`;
  if (Array.isArray(v)) return `[${v.map(diag).join(', ')}]`;
  if (v instanceof Map) return `{${[...v].map(([k, x]) => `${diag(k)}: ${diag(x)}`).join(', ')}}`;
  throw new TypeError(`not a wire value: ${v}`);
}

const asJavaScriptReadsIt = (notation) => notation.replace(/(?<![\w.])(-?\d+)\.0(?![\d.e])/g, '$1');

function feed(vector) {
  const decoder = new FrameDecoder(vector.max_frame_bytes ?? DEFAULT_MAX_FRAME_BYTES);
  decoder.push(Buffer.from(vector.hex, 'hex'));
  const out = [];
  for (let frame = decoder.next(); frame !== null; frame = decoder.next()) {
    if (frame.type >= 0x80) continue;
    // value_bytes, where the vector sets it, bounds the items (R-CBOR-11)
    out.push({ frame, message: decodeMessage(frame, undefined, vector.value_bytes) });
  }
  decoder.checkEof();
  return out;
}

for (const vector of vectors) {
  test(`${vector.id} (${vector.requirements.join(', ')})`, () => {
    const { expect } = vector;
    if (expect.error !== undefined) {
      assert.throws(() => feed(vector), (err) => {
        assert.ok(err instanceof ProtocolError, `not a ProtocolError: ${err}`);
        assert.equal(err.code, CODES[expect.error], err.message);
        return true;
      });
      return;
    }
    const decoded = feed(vector);
    if (expect.discard) {
      assert.equal(decoded.length, 0);
      return;
    }
    assert.equal(decoded.length, 1);
    const [{ frame, message }] = decoded;
    assert.equal(message.name, expect.message);
    assert.equal(diag(decodePayload(frame.payload, 1000)), asJavaScriptReadsIt(expect.decoded));
    // JavaScript numbers cannot tell 100000.0 from 100000 (spec §6.1), so a
    // payload with integral floats does not survive a round trip through JS.
    if (vector.id === 'call-values') return;
    const again = encodePayload(decodePayload(frame.payload, 1000));
    assert.deepEqual(Buffer.from(again), Buffer.from(frame.payload), 'not re-encoded identically');
  });
}
