// mode: script
const resp = { data: { users: [{ name: "a", address: null }] } };
console.log(resp.data?.users?.[0]?.name, resp.data?.users?.[1]?.name, resp.data.users[0].address?.city);
console.log(resp.missing?.deep.chain, resp.fn?.(), null ?? "fallback", 0 ?? "not used", 0 || "used");
let count = null;
count ??= 10;
count ||= 20;
count &&= count + 1;
console.log(count);
