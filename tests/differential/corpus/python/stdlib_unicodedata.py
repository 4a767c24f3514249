import unicodedata

for ch in "é€😀中":
    print(ch, unicodedata.name(ch), unicodedata.category(ch), hex(ord(ch)))
print(unicodedata.normalize("NFD", "é").encode(), unicodedata.normalize("NFC", "e\u0301") == "é")
