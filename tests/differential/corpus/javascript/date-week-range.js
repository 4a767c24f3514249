// mode: script
function weekOf(iso) {
  const d = new Date(iso + "T00:00:00Z");
  const monday = new Date(d);
  monday.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  const sunday = new Date(monday);
  sunday.setUTCDate(monday.getUTCDate() + 6);
  return [monday, sunday].map((x) => x.toISOString().slice(0, 10));
}
console.log(weekOf("2024-05-16"));
console.log(weekOf("2024-12-31"));
