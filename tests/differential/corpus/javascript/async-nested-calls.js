// mode: script
async function fetchItem(id) {
  await null;
  return { id, price: id * 10 };
}

async function fetchOrder(ids) {
  const items = await Promise.all(ids.map(fetchItem));
  return { items, total: items.reduce((s, i) => s + i.price, 0) };
}

async function main() {
  const order = await fetchOrder([1, 2, 3]);
  console.log(JSON.stringify(order));
}

main();
