// mode: script
function* resource() {
  try {
    yield 1;
    yield 2;
  } finally {
    console.log("generator cleanup");
  }
}
for (const v of resource()) {
  console.log("value", v);
  break;
}
