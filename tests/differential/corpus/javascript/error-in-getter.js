// mode: script
const obj = {
  get value() {
    throw new Error("getter exploded");
  },
};
console.log("reading");
console.log(obj.value);
