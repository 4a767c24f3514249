const x = 1
x
