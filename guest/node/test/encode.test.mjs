// The codec's own encoder (encodePayload) against npm cbor2's encode in its
// deterministic (CDE) options with every map in its own order (R-CBOR-2):
// the same bytes on generated values and on the edges of each width. Seeded,
// so a failure repeats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cdeEncodeOptions, encode } from 'cbor2';
import { encodePayload } from '../codec.mjs';
import { generator, random } from './generate.mjs';

const REFERENCE = { ...cdeEncodeOptions, sortKeys: null };
const hex = (bytes) => Buffer.from(bytes).toString('hex');

test('encodePayload writes what cbor2 writes, on generated values', () => {
  const value = generator(random(5));
  for (let i = 0; i < 3000; i++) {
    const item = new Map([['value', value(4)]]);
    assert.equal(hex(encodePayload(item)), hex(encode(item, REFERENCE)));
  }
});

test('encodePayload writes what cbor2 writes, at the edges of every width', () => {
  const edges = [
    0, 23, 24, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER,
    -1, -24, -25, -256, -257, -65536, -65537, -(2 ** 32), -(2 ** 32) - 1,
    Number.MAX_SAFE_INTEGER + 1, 2 ** 64, -(2 ** 64), 1e300, -1e300, 2 ** -149, 2 ** -150,
    2 ** -24, 2 ** -25, 3 * 2 ** -24, 2 ** -14, 2 ** -15, 65504, 65505, 65519.99, 65520,
    1 + 2 ** -10, 1 + 2 ** -11, 1 + 2 ** -23, 1 + 2 ** -24, 3.4028234663852886e38, 3.5e38,
    0.1, -0, NaN, Infinity, -Infinity, 5e-324,
    0n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 64n - 1n, 2n ** 64n, -(2n ** 64n), -(2n ** 64n) - 1n,
    2n ** 200n, -(2n ** 200n), 255n * 2n ** 64n,
    '', 'a'.repeat(23), 'a'.repeat(24), 'é'.repeat(200), '\ud800', 'x\udc00y', '😀'.repeat(70000),
    new Uint8Array(0), new Uint8Array(24), new Uint8Array(70000),
    [], new Array(24).fill(null), new Map(), new Map([['b', 1], ['a', 2]]),
  ];
  for (const edge of edges) {
    const item = new Map([['value', edge]]);
    assert.equal(hex(encodePayload(item)), hex(encode(item, REFERENCE)), String(edge));
  }
});
