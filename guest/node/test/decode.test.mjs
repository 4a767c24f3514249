// The codec's own strict decoder (decodePayload) against npm cbor2's decode
// with the strict options: on generated values both give the same result,
// and on corrupted payloads whatever ours accepts cbor2 accepts too, with the
// same value (ours adds the checks cbor2 lacks: float widths, bignums, key
// types, depth). Seeded, so a failure repeats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode, Tag } from 'cbor2';
import { CODES, ProtocolError, decodeMessage, decodePayload, encodePayload } from '../codec.mjs';
import { generator, random } from './generate.mjs';

const STRICT = {
  rejectStreaming: true, requirePreferred: true,
  rejectDuplicateKeys: true, rejectLongLoundNaN: true, rejectSimple: true, rejectUndefined: true,
  ignoreGlobalTags: true, preferMap: true,
};

/** cbor2's value in the wire mapping: bignum tags become bigints. */
function reference(payload) {
  const unwrap = (v) => {
    if (v instanceof Tag) {
      const magnitude = BigInt(`0x${Buffer.from(v.contents).toString('hex')}`);
      return v.tag === 2 ? magnitude : -1n - magnitude;
    }
    if (Array.isArray(v)) return v.map(unwrap);
    if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, unwrap(x)]));
    return v;
  };
  return unwrap(decode(payload, STRICT));
}

/** Every map's keys, in order, depth first (deepEqual ignores a Map's order). */
function keyOrder(v, out = []) {
  if (Array.isArray(v)) v.forEach((x) => keyOrder(x, out));
  if (v instanceof Map) {
    out.push([...v.keys()]);
    v.forEach((x) => keyOrder(x, out));
  }
  return out;
}

test('decodePayload gives what cbor2 gives, on generated values', () => {
  const rand = random(7);
  const value = generator(rand);
  for (let i = 0; i < 3000; i++) {
    const sent = new Map([['value', value(4)]]);
    const payload = encodePayload(sent);
    const decoded = decodePayload(payload);
    assert.deepEqual(decoded, reference(payload));
    assert.deepEqual(keyOrder(decoded), keyOrder(sent)); // R-CBOR-2: the sender's order
  }
});

test('decodePayload is never looser than cbor2 on corrupted payloads', () => {
  const rand = random(11);
  const value = generator(rand);
  let accepted = 0;
  for (let i = 0; i < 20000; i++) {
    const payload = encodePayload(new Map([['value', value(3)]]));
    const bad = Uint8Array.from(payload);
    const where = Math.floor(rand() * bad.length);
    const how = rand();
    let input = bad;
    if (how < 0.6) bad[where] = Math.floor(rand() * 256);
    else if (how < 0.8) input = bad.subarray(0, where);
    else input = Uint8Array.from([...bad, Math.floor(rand() * 256)]);
    let ours;
    try {
      ours = decodePayload(input);
    } catch (err) {
      assert.ok(err instanceof ProtocolError && err.code === CODES.MALFORMED_PAYLOAD, String(err));
      continue;
    }
    accepted += 1;
    assert.deepEqual(ours, reference(input), Buffer.from(input).toString('hex'));
  }
  assert.ok(accepted > 1000, `only ${accepted} corrupted payloads were still valid`);
});

test('floats must be in their shortest width', () => {
  const f64 = (n) => { const b = new Uint8Array(9); b[0] = 0xfb; new DataView(b.buffer).setFloat64(1, n); return b; };
  const f32 = (n) => { const b = new Uint8Array(5); b[0] = 0xfa; new DataView(b.buffer).setFloat32(1, n); return b; };
  for (const n of [1.5, 0, -0, Infinity, 65504, 2 ** -24]) {
    assert.throws(() => decodePayload(f64(n)), ProtocolError);
    assert.throws(() => decodePayload(f32(n)), ProtocolError);
  }
  assert.equal(decodePayload(f32(Math.fround(0.1))), Math.fround(0.1));
  assert.equal(decodePayload(f64(0.1)), 0.1);
  assert.throws(() => decodePayload(f64(NaN)), ProtocolError);
  assert.throws(() => decodePayload(Uint8Array.from([0xf9, 0x7e, 0x01])), ProtocolError);
  assert.throws(() => decodePayload(Uint8Array.from([0xf9, 0xfe, 0x00])), ProtocolError);
  assert.ok(Number.isNaN(decodePayload(Uint8Array.from([0xf9, 0x7e, 0x00]))));
});

test('depth is bounded at the containers, with the path of the item', () => {
  const nested = (n) => Uint8Array.from([...Array(n).fill(0x81), 0x01]);
  assert.deepEqual(decodePayload(nested(3), 3), [[[1]]]);
  assert.throws(() => decodePayload(nested(4), 3), /\$\[0\]\[0\]\[0\]: nested too deeply/);
});

test('-2 ** 53 is a BigInt, as every integer past a Number\'s exact ones', () => {
  assert.equal(decodePayload(Buffer.from('3b001fffffffffffff', 'hex')), -(2n ** 53n));
  assert.equal(decodePayload(Buffer.from('3b001ffffffffffffe', 'hex')), -(2 ** 53 - 1));
  assert.equal(decodePayload(Buffer.from('1b001fffffffffffff', 'hex')), 2 ** 53 - 1);
});

test('an integer field that holds a fraction or an infinity is INVALID_MESSAGE', () => {
  // {"id": X, "value": null}: a RESULT whose id is a float
  for (const id of ['f93e00', 'f97c00', 'fb4340000000000001']) {
    const payload = Buffer.from(`a2626964${id}6576616c7565f6`, 'hex');
    assert.throws(() => decodeMessage({ type: 4, payload }),
      (err) => err instanceof ProtocolError && err.code === CODES.INVALID_MESSAGE, id);
  }
});

test('an integer field that holds an integral float is INVALID_MESSAGE', () => {
  // {"id": 1.0, "value": null}, then {"id": 1, "value": 1.0}: only the field is checked
  const payload = Buffer.from('a2626964f93c006576616c7565f6', 'hex');
  assert.throws(() => decodeMessage({ type: 4, payload }),
    (err) => err instanceof ProtocolError && err.code === CODES.INVALID_MESSAGE);
  const fine = Buffer.from('a26269640165' + '76616c7565f93c00', 'hex');
  assert.deepEqual(decodeMessage({ type: 4, payload: fine }).body, { id: 1, value: 1 });
});

test('decoded bytes own their memory, not a view of the payload (§6.1)', () => {
  // {"id": 1, "value": h'00010203'}, from a Buffer as the guest reads it
  const payload = Buffer.from('a26269640165' + '76616c7565' + '4400010203', 'hex');
  const { value } = decodeMessage({ type: 4, payload }).body;
  assert.equal(value.constructor, Uint8Array);
  assert.deepEqual([value.byteOffset, value.buffer.byteLength], [0, 4]);
  payload.fill(0); // the frame's buffer reused: the value keeps its bytes
  assert.deepEqual([...value], [0, 1, 2, 3]);
});
