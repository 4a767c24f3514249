async function ask() {
  return await hang()
}
await ask()
