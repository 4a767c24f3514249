// mode: script
async function fetchConfig(): Promise<Record<string, string>> {
  await null;
  throw new Error("config service unavailable");
}
async function main(): Promise<void> {
  const config = await fetchConfig();
  console.log(config);
}
main();
