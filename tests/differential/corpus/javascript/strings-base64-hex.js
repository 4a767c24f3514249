// mode: script
const text = "tether ✓";
const b64 = Buffer.from(text).toString("base64");
console.log(b64, Buffer.from(b64, "base64").toString());
console.log(Buffer.from(text).toString("hex"));
console.log(btoa("plain ascii"), atob("cGxhaW4gYXNjaWk="));
console.log(Buffer.from("hi"), Buffer.from([1, 2, 3]).toJSON());
