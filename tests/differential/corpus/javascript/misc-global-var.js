// mode: script
var counter = 1;
globalThis.shared = "on the global object";
console.log(typeof counter, shared, globalThis.counter === undefined);
