def work():
    try:
        return 1 / 0
    finally:
        print("finally runs before the error propagates")


work()
