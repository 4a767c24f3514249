// mode: module
import { gzipSync, gunzipSync } from "node:zlib";
const input = "repeat ".repeat(100);
const packed = gzipSync(input);
console.log(packed.length < input.length, gunzipSync(packed).toString() === input);
