// How many arguments a binding takes by position, from the signature RUN gives
// it: the guest sends no more (`xs.map(binding)` passes the index and the array).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { positionalCount } from '../arguments.mjs';

test('a signature tells how many arguments go by position', () => {
  const cases = [
    ['(query: string, limit?: number): Promise<string[]>', 2],
    ['(): Promise<null>', 0],
    ['(...xs: number[]): Promise<number>', Infinity],
    ['(a: number, ...rest: string[]): Promise<null>', Infinity],
    ['(a: Record<string, number>, b?: [number, string]): Promise<null>', 2],
    ['(input: {\n  city: string;\n  days?: number;\n}): Promise<any>', 1],
    ["(unit: 'a,b' | \"c\", cb: (x: number, y: number) => void): Promise<null>", 2],
    ['(m: Map<string, Array<[number, string]>>): Promise<null>', 1],
    ['(length: "6\\"", pieces: number, units: "in\\"", gap?: number): Promise<null>', 4],
    ['(a: "x\\\\", b: number): Promise<null>', 2],
    ['(input: {\n  /** a, b */\n  city: string;\n}, extra?: number): Promise<any>', 2],
  ];
  for (const [signature, expected] of cases) assert.equal(positionalCount(signature), expected, signature);
});

test('a signature that does not read as expected says nothing', () => {
  for (const signature of [undefined, null, '', 'query: string', '(a: string', "(a: 'open"]) {
    assert.equal(positionalCount(signature), null, String(signature));
  }
});
