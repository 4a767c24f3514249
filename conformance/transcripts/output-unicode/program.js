console.log('café ☃ 😀')
