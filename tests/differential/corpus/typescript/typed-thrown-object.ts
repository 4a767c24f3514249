// mode: script
type Failure = { code: number; reason: string };
function fail(f: Failure): never {
  throw f;
}
fail({ code: 500, reason: "internal" });
