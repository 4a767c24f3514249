// mode: script
const original = { a: [1, { b: 2 }], d: new Date(Date.UTC(2020, 5, 1)) };
const viaJson = JSON.parse(JSON.stringify(original));
const viaStructured = structuredClone(original);
console.log(viaJson, viaStructured);
console.log(typeof viaJson.d, viaStructured.d instanceof Date);
