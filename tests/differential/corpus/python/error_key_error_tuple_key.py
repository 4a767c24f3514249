grid = {(0, 0): "start"}
print(grid[(1, 2)])
