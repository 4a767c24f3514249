async function main() {
  const total = await add(1, 2)
  console.log('sum', total)
}
main()
