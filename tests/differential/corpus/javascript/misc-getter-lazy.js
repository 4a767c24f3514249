// mode: script
const lazy = {
  get expensive() {
    console.log("computing");
    const value = [1, 2, 3].map((x) => x * 2);
    Object.defineProperty(this, "expensive", { value });
    return value;
  },
};
console.log(lazy.expensive);
console.log(lazy.expensive);
