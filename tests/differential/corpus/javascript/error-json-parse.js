// mode: script
const text = '{"a": 1,}';
const data = JSON.parse(text);
console.log(data);
