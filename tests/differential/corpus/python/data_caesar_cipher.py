import string


def caesar(text, shift):
    lower = string.ascii_lowercase
    upper = string.ascii_uppercase
    table = str.maketrans(lower + upper, lower[shift:] + lower[:shift] + upper[shift:] + upper[:shift])
    return text.translate(table)


secret = caesar("Hello, World!", 3)
print(secret, caesar(secret, -3))
