// mode: script
function first<T>(items: T[]): T | undefined {
  return items[0];
}
function mapValues<K extends string, V, R>(obj: Record<K, V>, fn: (v: V) => R): Record<K, R> {
  const out = {} as Record<K, R>;
  for (const k of Object.keys(obj) as K[]) out[k] = fn(obj[k]);
  return out;
}
console.log(first([3, 4]), first<string>([]));
console.log(mapValues({ a: 1, b: 2 }, (v) => v * 10));
