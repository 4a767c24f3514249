try:
    answer = input("Your name? ")
except EOFError:
    print("no input available")
