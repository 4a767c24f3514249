// mode: script
const price = "USD100 EUR200 USD300";
console.log(price.match(/(?<=USD)\d+/g));
console.log(price.match(/\d+(?= )/g));
console.log("1234567.891".replace(/\B(?=(\d{3})+(?!\d))/g, ","));
