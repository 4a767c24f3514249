// mode: module
import * as path from "node:path";
import * as util from "node:util";
console.log(path.posix.join("/a", "b", "../c"), path.sep);
console.log(util.format("%s=%d", "x", 1));
console.log(typeof path.default, typeof path.resolve);
