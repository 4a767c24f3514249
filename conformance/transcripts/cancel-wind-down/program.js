try {
  await hang()
} catch (e) {
  if (!(e instanceof Cancelled)) throw e
  console.log('cleanup')
  try {
    await log('bye')
  } catch (e2) {
    console.log(e2.type)
  }
  throw e
}
