// mode: script
interface Item { id: number; price: number }
async function load(id: number): Promise<Item> {
  await new Promise<void>((r) => setTimeout(r, 3));
  return { id, price: id * 2.5 };
}
async function main(): Promise<void> {
  const items = await Promise.all([1, 2, 3].map(load));
  const total = items.reduce((s: number, i: Item) => s + i.price, 0);
  console.log(`total: ${total.toFixed(2)}`);
}
main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
