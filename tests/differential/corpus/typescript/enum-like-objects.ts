// mode: script
const Color = { Red: "RED", Green: "GREEN" } as const;
type Color = (typeof Color)[keyof typeof Color];
function paint(c: Color): string {
  return `painting ${c.toLowerCase()}`;
}
console.log(paint(Color.Red), Object.values(Color));
