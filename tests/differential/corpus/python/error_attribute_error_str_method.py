text = "hello"
print(text.uppercase())
