// mode: script
const thenable = {
  then(resolve) {
    setTimeout(() => resolve("from thenable"), 5);
  },
};

(async () => {
  const v = await thenable;
  console.log(v);
})();
