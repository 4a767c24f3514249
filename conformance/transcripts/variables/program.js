const total = await add(rows.reduce((a, b) => a + b, 0), 0)
let _scratch = 1
const when = new Date(0)
const big = 'x'.repeat(2000)
function helper() {}
return `${total} ${unit}`
