// mode: script
const user = {};
Object.defineProperty(user, "id", { value: 7, enumerable: false });
Object.defineProperty(user, "name", { get: () => "Ada", enumerable: true });
console.log(user.id, user.name, Object.keys(user));
console.log(user);
console.log(JSON.stringify(user));
