// mode: module
import { createHash, type Hash } from "node:crypto";
const h: Hash = createHash("sha256");
h.update("typescript");
console.log(h.digest("hex").slice(0, 16));
