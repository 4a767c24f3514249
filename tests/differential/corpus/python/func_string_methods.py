s = "  Hello, World!  "
print(s.strip().lower(), s.split(","), s.strip().replace("World", "There"))
print("-".join(["a", "b", "c"]), "abc".center(9, "*"), "42".zfill(5))
print("Title Case Words".swapcase(), "x".isalpha(), "3.5".isdigit(), "snake_case".title())
print("a,b,,c".split(","), "line1\nline2".splitlines(), "tab\tsep".expandtabs(4))
