// mode: script
type Point = [x: number, y: number];
const pts: Point[] = [[0, 0], [3, 4], [-1, 2]];
const dist = ([x, y]: Point): number => Math.hypot(x, y);
console.log(pts.map(dist));
function minMax(xs: number[]): [min: number, max: number] {
  return [Math.min(...xs), Math.max(...xs)];
}
const [lo, hi] = minMax([4, 2, 9]);
console.log(lo, hi);
