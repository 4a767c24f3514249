let value = 0
for (let i = 0; i < 32; i++) value = [value]
value = await echo(value)
const deeper = [value]
try {
  await echo(deeper)
} catch (e) {
  if (e instanceof TypeError) console.log('TypeError at the call')
}
return deeper
