// mode: script
const start = new Date("2024-01-30T00:00:00Z");
const next = new Date(start);
next.setUTCMonth(next.getUTCMonth() + 1);
console.log(next.toISOString());
const days = (new Date("2024-12-25T00:00:00Z") - new Date("2024-01-01T00:00:00Z")) / 86_400_000;
console.log("days until Christmas from New Year:", days);
const addDays = (date, n) => new Date(date.getTime() + n * 86_400_000);
console.log(addDays(start, 45).toISOString().slice(0, 10));
