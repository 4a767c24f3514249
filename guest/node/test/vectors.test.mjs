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

function feed(vector) {
  const decoder = new FrameDecoder(vector.max_frame_bytes ?? DEFAULT_MAX_FRAME_BYTES);
  decoder.push(Buffer.from(vector.hex, 'hex'));
  const out = [];
  for (let frame = decoder.next(); frame !== null; frame = decoder.next()) {
    if (frame.type >= 0x80) continue;
    out.push({ frame, message: decodeMessage(frame) });
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
    // JavaScript numbers cannot tell 100000.0 from 100000 (spec §6.1), so a
    // payload with integral floats does not survive a round trip through JS.
    if (vector.id === 'call-values') return;
    const again = encodePayload(decodePayload(frame.payload, 1000));
    assert.deepEqual(Buffer.from(again), Buffer.from(frame.payload), 'not re-encoded identically');
  });
}
