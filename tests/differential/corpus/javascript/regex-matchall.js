// mode: script
const text = "a1 b22 c333";
for (const m of text.matchAll(/([a-z])(\d+)/g)) console.log(m[0], m[1], m[2], m.index);
console.log(text.match(/\d+/g));
console.log("no digits".match(/\d+/g));
