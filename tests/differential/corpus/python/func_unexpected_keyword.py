def connect(host, port):
    return (host, port)


connect(host="x", port=1, timeout=5)
