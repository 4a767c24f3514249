// mode: script
const settings = { db: { host: "localhost" } };
console.log(settings.db.host);
console.log(settings.cache.size);
