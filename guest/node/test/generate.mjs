// Seeded generators of wire values, shared by the codec's tests.

export function random(seed) { // mulberry32
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function generator(rand) {
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const int = (n) => Math.floor(rand() * n);
  const text = () => String.fromCodePoint(...Array.from({ length: int(6) },
    () => pick([0x61 + int(26), 0xe9, 0x4e2d, 0x1f600, 0x30 + int(10)])));
  const scalar = () => pick([
    () => int(30), () => -1 - int(30), () => int(2 ** 32), () => Number.MAX_SAFE_INTEGER - int(9),
    () => BigInt(int(2 ** 30)) * 2n ** 34n, () => -(2n ** 64n) + BigInt(int(9)),
    () => 2n ** 64n + BigInt(int(1000)), () => -(2n ** 70n), () => 0.5, () => rand() * 1e6,
    () => Math.fround(rand()), () => pick([NaN, Infinity, -Infinity, -0, 65504, 1e-7, 1.5]),
    () => text(), () => new Uint8Array(Array.from({ length: int(5) }, () => int(256))),
    () => pick([true, false, null]),
  ])();
  const value = (depth) => {
    if (depth === 0 || rand() < 0.5) return scalar();
    if (rand() < 0.5) return Array.from({ length: int(4) }, () => value(depth - 1));
    return new Map(Array.from({ length: int(4) }, () => [text(), value(depth - 1)]));
  };
  return value;
}
