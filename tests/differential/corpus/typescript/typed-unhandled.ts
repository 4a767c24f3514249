// mode: script
async function job(name: string): Promise<string> {
  await null;
  throw new TypeError(`${name} failed`);
}
job("nightly");
