// mode: script
function show({ name, age }) {
  console.log(name, age);
}
show({ name: "Ann", age: 30 });
show(null);
