data = b"\xff\xfeabc"
print(data.decode("utf-8"))
