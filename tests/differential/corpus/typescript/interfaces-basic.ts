// mode: script
interface User {
  id: number;
  name: string;
  email?: string;
}
const users: User[] = [
  { id: 1, name: "Ann" },
  { id: 2, name: "Bob", email: "bob@example.com" },
];
function describe(u: User): string {
  return `${u.id}: ${u.name}${u.email ? ` <${u.email}>` : ""}`;
}
users.map(describe).forEach((line) => console.log(line));
