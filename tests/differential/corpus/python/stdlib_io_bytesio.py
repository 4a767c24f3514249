import io

buf = io.BytesIO()
buf.write(b"hello ")
buf.write("wörld".encode())
print(buf.getvalue(), buf.tell())
buf.seek(0)
print(buf.read(5), io.StringIO("a\nb\n").readlines())
