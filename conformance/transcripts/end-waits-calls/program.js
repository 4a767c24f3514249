async function main() {
  const x = await add(1, 2)
  console.log('sum', x)
}
main()
