// mode: script
const n = 1234567.891;
console.log(n.toLocaleString("en-US"));
console.log(new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(n));
console.log(new Intl.NumberFormat("de-DE").format(n));
console.log(new Intl.NumberFormat("en-US", { style: "percent", maximumFractionDigits: 1 }).format(0.4567));
console.log(new Intl.NumberFormat("en", { notation: "compact" }).format(n));
