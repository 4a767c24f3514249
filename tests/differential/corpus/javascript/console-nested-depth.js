// mode: script
const tree = { value: 1, children: [{ value: 2, children: [{ value: 3, children: [{ value: 4, children: [] }] }] }] };
console.log(tree);
console.log(JSON.stringify(tree));
console.log([[[[["deep"]]]]]);
