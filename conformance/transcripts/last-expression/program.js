const x = 20
x * 2 + 2
