// mode: script
const d = new Date(Date.UTC(2024, 6, 4, 15, 30));
const fmt = new Intl.DateTimeFormat("en-US", { timeZone: "UTC", dateStyle: "full", timeStyle: "short" });
console.log(fmt.format(d));
console.log(d.toLocaleDateString("en-GB", { timeZone: "UTC" }));
console.log(d.toLocaleString("en-US", { timeZone: "UTC" }));
