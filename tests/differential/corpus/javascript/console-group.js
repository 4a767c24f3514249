// mode: script
console.log("top");
console.group("Group A");
console.log("inside A");
console.group();
console.log("nested");
console.error("nested error");
console.groupEnd();
console.log({ in: "group", arr: [1, 2] });
console.groupEnd();
console.log("back to top");
