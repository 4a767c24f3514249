async function main() {
  await null
  throw new RangeError('main failed')
}
main()
