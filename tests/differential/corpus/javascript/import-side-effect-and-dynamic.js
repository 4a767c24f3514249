// mode: module
import "node:util";
const { default: path } = await import("node:path");
const { sep } = await import("path");
console.log(path.join("x", "y"), sep);
