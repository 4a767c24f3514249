word = "abc"
print(word[10])
