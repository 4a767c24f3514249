// mode: script
const emails = ["a@b.co", "bad@", "x.y+z@sub.example.org", "@nope.com"];
const re = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
for (const e of emails) console.log(e.padEnd(24), re.test(e) ? "valid" : "invalid");
