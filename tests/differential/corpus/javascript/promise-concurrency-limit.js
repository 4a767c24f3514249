// mode: script
async function mapLimit(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  async function worker(id) {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], id);
    }
  }
  await Promise.all(Array.from({ length: limit }, (_, id) => worker(id)));
  return results;
}

mapLimit([5, 3, 8, 1, 9, 2], 2, async (n) => {
  await new Promise((r) => setTimeout(r, n));
  return n * 2;
}).then((r) => console.log(r));
