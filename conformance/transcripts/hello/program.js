console.log("hello")
return 42
