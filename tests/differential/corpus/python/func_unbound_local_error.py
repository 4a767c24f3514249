count = 10


def bump():
    count += 1
    return count


bump()
