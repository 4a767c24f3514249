// mode: script
type Method = "GET" | "POST";
type Endpoint = `/${string}`;
const route = (m: Method, e: Endpoint): string => `${m} ${e}`;
console.log(route("GET", "/users"), route("POST", "/users/1"));
