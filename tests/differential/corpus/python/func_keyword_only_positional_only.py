def configure(host, port=80, /, *, timeout=10, retries=3):
    return f"{host}:{port} t={timeout} r={retries}"


print(configure("a"))
print(configure("b", 8080, timeout=1))
print(configure("c", retries=0))
print(configure(host="d"))
