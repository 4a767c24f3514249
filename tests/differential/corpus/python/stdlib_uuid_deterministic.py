import uuid

ns = uuid.NAMESPACE_DNS
print(uuid.uuid5(ns, "example.com"), uuid.uuid3(ns, "example.com"))
u = uuid.UUID("12345678-1234-5678-1234-567812345678")
print(u.hex, u.version, str(u).upper())
