// mode: script
try {
  structuredClone({ fn() {} });
} catch (e) {
  console.log(e.name);
}
const copy = structuredClone(new Map([["a", new Set([1])]]));
console.log(copy);
