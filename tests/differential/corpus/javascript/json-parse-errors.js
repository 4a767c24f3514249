// mode: script
for (const text of ["{", "[1,]", "{'a':1}", "", "tru", '{"a":1} x']) {
  try {
    JSON.parse(text);
  } catch (e) {
    console.log(JSON.stringify(text), "->", e.name, e.message);
  }
}
