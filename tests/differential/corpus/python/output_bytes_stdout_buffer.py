import sys

sys.stdout.buffer.write(b"raw bytes line\n")
sys.stdout.buffer.write("ünïcode via buffer\n".encode())
sys.stdout.flush()
print("text after bytes")
