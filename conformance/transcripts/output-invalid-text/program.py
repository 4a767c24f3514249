print("a\udcff\udcfeb")
print("c\udce2d")
print("e\ud800f")
