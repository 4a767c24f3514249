from array import array

a = array("i", [1, 2, 3])
a.append(4)
print(a, a.tolist(), a.itemsize, sum(a))
mv = memoryview(b"abcdef")
print(bytes(mv[1:4]), mv.nbytes, mv[0])
