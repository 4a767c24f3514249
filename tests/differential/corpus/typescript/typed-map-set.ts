// mode: script
const inventory = new Map<string, { qty: number; price: number }>();
inventory.set("apple", { qty: 3, price: 0.5 }).set("pear", { qty: 0, price: 0.75 });
const inStock = new Set<string>([...inventory].filter(([, v]) => v.qty > 0).map(([k]) => k));
console.log(inventory, inStock);
const value = [...inventory.values()].reduce((s, v) => s + v.qty * v.price, 0);
console.log(value.toFixed(2));
