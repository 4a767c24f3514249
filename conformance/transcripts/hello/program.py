print("hello")
return 42
