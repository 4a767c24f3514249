// mode: script
for (const s of ["2024-03-01", "2024-03-01T10:00:00Z", "2024-03-01T10:00:00+02:00", "March 7, 2024 UTC"]) {
  const d = new Date(s);
  console.log(s.padEnd(28), d.toISOString());
}
console.log(Date.parse("2000-01-01T00:00:00.000Z"));
