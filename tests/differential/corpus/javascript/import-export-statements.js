// mode: module
export const VERSION = "1.2.3";
export function greet(name) {
  return `hello ${name}`;
}
export class Greeter {}
const internal = 5;
export { internal };
export default function main() {
  console.log(greet("module"), VERSION, internal, typeof Greeter);
}
main();
