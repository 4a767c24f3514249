// mode: script
async function* pages(total) {
  for (let page = 1; page <= total; page++) {
    await new Promise((r) => setTimeout(r, 3));
    yield { page, items: [page * 10, page * 10 + 1] };
  }
}
(async () => {
  const all = [];
  for await (const { page, items } of pages(3)) {
    console.log("page", page);
    all.push(...items);
  }
  console.log(all);
})();
