name = input("Enter name: ")
print("hello", name)
