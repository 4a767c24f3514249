setTimeout(() => console.log('later'), 20)
console.log('now')
return 1
