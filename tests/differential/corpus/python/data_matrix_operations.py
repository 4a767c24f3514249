def matmul(a, b):
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]


def transpose(m):
    return [list(r) for r in zip(*m)]


A = [[1, 2], [3, 4]]
B = [[5, 6], [7, 8]]
print(matmul(A, B))
print(transpose([[1, 2, 3], [4, 5, 6]]))
identity = [[int(i == j) for j in range(3)] for i in range(3)]
print(identity)
