def greet(name)
    print(name)
