// mode: script
const obj = { password: "secret", user: "ann", when: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)) };
console.log(JSON.stringify(obj, (k, v) => (k === "password" ? undefined : v)));
console.log(JSON.stringify(obj, ["user"]));
const back = JSON.parse('{"when":"2024-01-02T03:04:05.000Z","n":"5"}', (k, v) =>
  k === "when" ? new Date(v) : k === "n" ? Number(v) : v,
);
console.log(back.when.getUTCFullYear(), back.n + 1);
