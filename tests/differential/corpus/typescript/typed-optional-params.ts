// mode: script
function greet(name: string, greeting: string = "Hello", punctuation?: string): string {
  return `${greeting}, ${name}${punctuation ?? "."}`;
}
console.log(greet("Ann"), greet("Bob", "Hi", "!"));
function sum(...nums: number[]): number {
  return nums.reduce((a, b) => a + b, 0);
}
console.log(sum(), sum(1, 2, 3));
