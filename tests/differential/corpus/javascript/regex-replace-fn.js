// mode: script
const tpl = "Hello {name}, you have {count} new {thing}";
const vars = { name: "Ann", count: 3 };
console.log(tpl.replace(/\{(\w+)\}/g, (whole, key) => vars[key] ?? whole));
console.log("snake_case_name".replace(/_([a-z])/g, (_, c) => c.toUpperCase()));
console.log("a-b-c".replaceAll("-", "+"));
console.log("price: 10".replace(/(\d+)/, "$1.00 ($&)"));
