// mode: script
const routes = {
  home: "/",
  about: "/about",
} as const satisfies Record<string, string>;
type Route = keyof typeof routes;
const keys = Object.keys(routes) as Route[];
console.log(keys, routes.about);
const tuple = [1, "two"] as const;
console.log(tuple.length, tuple[1]);
