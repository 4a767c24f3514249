// mode: script
console.log(decodeURIComponent("%41%42"));
console.log(decodeURIComponent("%E0%A4%A"));
