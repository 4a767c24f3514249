// mode: script
const re = /(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})/;
const m = "Due: 2024-03-15.".match(re);
console.log(m.groups.year, m.groups.month, m.groups.day, m.index);
console.log({ ...m.groups });
