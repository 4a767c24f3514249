// mode: script
Promise.resolve({ items: null })
  .then((data) => data.items.map((x) => x * 2))
  .then((doubled) => console.log(doubled));
