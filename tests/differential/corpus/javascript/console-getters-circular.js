// mode: script
const o = { name: "root", get computed() { return 42; }, set only(v) {} };
o.self = o;
o.list = [o, { back: o }];
console.log(o);
const a = [1];
a.push(a);
console.log(a);
