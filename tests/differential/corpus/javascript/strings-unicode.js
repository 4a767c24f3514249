// mode: script
const s = "héllo 👋 wörld";
console.log(s.length, [...s].length);
console.log(s.split(" "), Array.from(s).slice(6, 7));
console.log("👋".codePointAt(0).toString(16), String.fromCodePoint(0x1f600));
console.log(encodeURIComponent(s));
console.log(Buffer.byteLength(s), new TextEncoder().encode("é"));
