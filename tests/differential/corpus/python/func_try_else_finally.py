def divide(a, b):
    try:
        result = a / b
    except ZeroDivisionError:
        print("division by zero")
        return None
    else:
        print("no error")
        return result
    finally:
        print("done dividing", a, b)


print(divide(6, 3))
print(divide(1, 0))
