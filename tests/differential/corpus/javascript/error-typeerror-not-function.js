// mode: script
const api = { list: [] };
console.log("calling");
api.fetch();
