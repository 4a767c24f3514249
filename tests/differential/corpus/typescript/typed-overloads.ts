// mode: script
function format(value: number): string;
function format(value: Date): string;
function format(value: number | Date): string {
  return typeof value === "number" ? value.toFixed(1) : value.toISOString();
}
console.log(format(3.14159), format(new Date(Date.UTC(2021, 0, 1))));
