// mode: module
export interface Options { verbose: boolean }
export type Level = "info" | "warn";
export const defaults: Options = { verbose: false };
export function log(level: Level, msg: string): void {
  console.log(`[${level}] ${msg}`);
}
export default class Logger {}
log("info", "exports are fine");
console.log(defaults, typeof Logger);
