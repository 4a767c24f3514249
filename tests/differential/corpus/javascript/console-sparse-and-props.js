// mode: script
const arr = [1, 2, 3];
arr.extra = "prop";
arr[10] = 11;
console.log(arr);
console.log(new Array(5), [ , , 1]);
const fn = () => {};
fn.meta = { a: 1 };
console.log(fn);
console.log(Object.assign(() => {}, { x: 1 }));
