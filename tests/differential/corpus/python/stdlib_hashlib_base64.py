import base64
import hashlib
import hmac

print(hashlib.sha256(b"hello").hexdigest())
print(hashlib.md5("text".encode()).hexdigest())
print(base64.b64encode(b"binary\x00data").decode(), base64.b64decode("aGk="))
print(base64.urlsafe_b64encode(b"\xff\xfe").decode())
print(hmac.new(b"key", b"msg", "sha256").hexdigest()[:16])
