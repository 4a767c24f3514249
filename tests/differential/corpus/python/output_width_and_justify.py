for word in ["a", "bb", "ccc"]:
    print(word.ljust(5, ".") + "|" + word.rjust(5) + "|" + word.center(7, "_"))
