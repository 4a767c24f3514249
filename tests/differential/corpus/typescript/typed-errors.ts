// mode: script
class AppError extends Error {
  code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = "AppError";
    this.code = code;
  }
}
function risky(n: number): number {
  if (n > 2) throw new AppError("E_TOO_BIG", `value ${n} is too big`);
  return n;
}
try {
  risky(5);
} catch (e) {
  if (e instanceof AppError) console.log(e.code, e.message);
}
risky(3);
