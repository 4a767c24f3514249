// mode: script
function validate(values: number[]): boolean {
  return values.every((v) => v >= 0);
}
if (!validate([1, -2, 3])) {
  console.error("validation failed");
  process.exitCode = 1;
}
