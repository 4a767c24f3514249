// mode: script
const main = async () => {
  const fetchUser = async (id) => ({ id, name: `user${id}` });
  const users = [];
  for (let i = 1; i <= 3; i++) users.push(await fetchUser(i));
  console.log(users.map((u) => u.name).join(", "));
};

main().catch(console.error);
