import heapq

a = [1, 4, 9]
b = [2, 3, 10]
c = [0, 5]
print(list(heapq.merge(a, b, c)))
print(list(heapq.merge(["b", "d"], ["a", "c"], key=str.upper)))
