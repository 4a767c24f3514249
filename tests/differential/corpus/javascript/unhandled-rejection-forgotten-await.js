// mode: module
async function save(record) {
  await null;
  if (!record.id) throw new Error("record has no id");
  return record.id;
}
save({ name: "no id" });
console.log("saved (or so it seems)");
await new Promise((r) => setTimeout(r, 10));
console.log("unreachable");
