// mode: script
function* ids(prefix: string): Generator<string, void, unknown> {
  let i = 0;
  while (i < 3) yield `${prefix}-${i++}`;
}
async function* ticks(n: number): AsyncGenerator<number> {
  for (let i = 0; i < n; i++) {
    await new Promise((r) => setTimeout(r, 2));
    yield i;
  }
}
console.log([...ids("x")]);
(async () => {
  for await (const t of ticks(3)) console.log("tick", t);
})();
