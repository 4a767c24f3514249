// mode: module
const handler = { name: "handler", run: (): string => "ran" };
export default handler;
console.log(handler.run());
