// mode: module
import { setTimeout as delay } from "node:timers/promises";
type Result = { ok: true; value: number } | { ok: false; error: string };
async function attempt(n: number): Promise<Result> {
  await delay(2);
  return n % 2 ? { ok: false, error: `odd ${n}` } : { ok: true, value: n };
}
for (const n of [1, 2]) {
  const r = await attempt(n);
  console.log(r.ok ? `value ${r.value}` : `error ${r.error}`);
}
