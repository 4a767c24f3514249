// mode: script
const config = {
  server: { port: 8080, hosts: ["a.example", "b.example"] },
  features: { beta: true, limits: { rps: 100, burst: [1, 2, 3] } },
};
console.log(JSON.stringify(config, null, 4));
