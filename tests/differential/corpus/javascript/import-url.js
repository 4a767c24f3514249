// mode: module
import { URL, URLSearchParams } from "node:url";
const u = new URL("https://example.com:8080/a/b?x=1&y=two#frag");
console.log(u.hostname, u.port, u.pathname, u.searchParams.get("y"), u.hash);
const q = new URLSearchParams({ q: "node js", page: "2" });
console.log(q.toString());
console.log(new URL("../c?z=3", u).href);
