// mode: script
const re = /o/gi;
console.log("foo bOo".match(re).length, re.flags, re.source);
const sticky = /\d/y;
sticky.lastIndex = 1;
console.log(sticky.test("a1b"), sticky.lastIndex);
console.log(/^b/m.test("a\nb"), /a.b/s.test("a\nb"));
console.log(/\p{L}+/u.exec("héllo wörld")[0]);
