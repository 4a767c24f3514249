// R-CBOR-11: the data items of a payload are counted before it is decoded,
// and a payload past the bound is refused (MALFORMED_PAYLOAD).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CODES, ProtocolError, countItems, decodePayload, encodePayload, exceedsValueItems, valueItems,
} from '../codec.mjs';

const count = (value) => {
  if (Array.isArray(value)) return 1 + value.reduce((n, v) => n + count(v), 0);
  if (value instanceof Map) return 1 + [...value.values()].reduce((n, v) => n + 1 + count(v), 0);
  return 1;
};

test('countItems counts every item, a bignum as one', () => {
  const values = [null, true, 1.5, 'text', new Uint8Array(3), 2n ** 80n, -(2n ** 80n), [],
    [1, [2, [3]], new Map([['a', [null]]])], new Map(), 'x'.repeat(1000)];
  for (const value of values) {
    const payload = encodePayload(new Map([['value', value]]));
    assert.equal(countItems(payload, 1e9), 2 + count(value), String(value));
  }
});

test('countItems stops past the limit', () => {
  const payload = encodePayload(new Map([['value', new Array(100).fill(0)]]));
  assert.equal(countItems(payload, 10), 11);
});

test('decodePayload refuses more items than allowed, and takes the bound itself', () => {
  const payload = encodePayload(new Map([['value', new Array(2000).fill([])]]));
  assert.throws(() => decodePayload(payload, 66, 2002), (err) => err instanceof ProtocolError
    && err.code === CODES.MALFORMED_PAYLOAD && /data items/.test(err.message));
  assert.equal(decodePayload(payload, 66, 2003).get('value').length, 2000); // map, key, array and 2000
});

test('the value bound follows value_bytes, with its floor', () => {
  assert.equal(valueItems(8 * 1024 * 1024), 524288);
  assert.equal(valueItems(1), 1024);
  const fits = encodePayload(new Map([['value', new Array(1023).fill(0)]]));
  const over = encodePayload(new Map([['value', new Array(1024).fill(0)]]));
  assert.equal(exceedsValueItems(fits, 1, 2), false);
  assert.equal(exceedsValueItems(over, 1, 2), true);
});
