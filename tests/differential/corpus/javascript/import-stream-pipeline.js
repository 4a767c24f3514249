// mode: module
import { pipeline } from "node:stream/promises";
import { Readable, Transform, Writable } from "node:stream";
const chunks = [];
await pipeline(
  Readable.from(["a", "b", "c"]),
  new Transform({ transform(chunk, _enc, cb) { cb(null, chunk.toString().toUpperCase()); } }),
  new Writable({ write(chunk, _enc, cb) { chunks.push(chunk.toString()); cb(); } }),
);
console.log(chunks.join(""));
