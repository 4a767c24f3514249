// mode: script
interface Fish { swim(): string }
interface Bird { fly(): string }
function isFish(p: Fish | Bird): p is Fish {
  return (p as Fish).swim !== undefined;
}
const pets: (Fish | Bird)[] = [{ swim: () => "splash" }, { fly: () => "flap" }];
for (const p of pets) console.log(isFish(p) ? p.swim() : p.fly());
function isString(x: unknown): x is string {
  return typeof x === "string";
}
console.log([1, "a", null, "b"].filter(isString));
