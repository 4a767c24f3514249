def swallow():
    try:
        raise ValueError("lost")
    finally:
        return "finally wins"


print(swallow())
