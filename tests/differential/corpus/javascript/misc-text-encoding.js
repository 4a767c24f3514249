// mode: script
const enc = new TextEncoder();
const dec = new TextDecoder();
const bytes = enc.encode("Grüße 🌍");
console.log(bytes.length, Array.from(bytes.slice(0, 4)));
console.log(dec.decode(bytes));
console.log(new TextDecoder("utf-8", { fatal: false }).decode(new Uint8Array([0xff, 0x41])));
