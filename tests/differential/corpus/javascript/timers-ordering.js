// mode: script
// Delays far apart: a loaded machine may pause the script between two of
// these lines, and plain Node then fires them in another order too.
setTimeout(() => console.log("t300"), 300);
setTimeout(() => console.log("t100"), 100);
setTimeout(() => console.log("t200"), 200);
setTimeout(() => console.log("t0"), 0);
console.log("scheduled");
