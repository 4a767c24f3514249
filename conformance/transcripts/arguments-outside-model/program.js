try {
  await add(1, {'a b': [new Date(0)]})
} catch (e) {
  return [e.name, e.message.split(': ').slice(0, 2)]
}
