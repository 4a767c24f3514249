// mode: script
interface Todo { title: string; done: boolean; tags: string[] }
const draft: Partial<Todo> = { title: "write" };
const preview: Omit<Todo, "tags"> = { title: "read", done: false };
const flags: Record<"a" | "b", boolean> = { a: true, b: false };
const frozen: Readonly<Todo> = { title: "x", done: true, tags: [] };
type Ret = ReturnType<() => Promise<number>>;
const r: Ret = Promise.resolve(4);
r.then((n) => console.log(draft, preview, flags, frozen.title, n));
