let error = null
try {
  try {
    return 'returned'
  } catch (e) {
    error = e
    console.log('caught')
  }
} finally {
  console.log('cleanup saw', error ? 'an error' : 'no error')
}
