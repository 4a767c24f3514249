// mode: module
import { createHash, createHmac } from "node:crypto";
console.log(createHash("sha256").update("hello").digest("hex"));
console.log(createHash("md5").update("hello").digest("base64"));
console.log(createHmac("sha1", "key").update("data").digest("hex"));
