// mode: script
const data = { name: "report", tags: ["a", "b"], meta: { rows: 3, empty: {} , list: [] }, missing: undefined, fn() {} };
console.log(JSON.stringify(data));
console.log(JSON.stringify(data, null, 2));
console.log(JSON.stringify(data, null, "\t"));
