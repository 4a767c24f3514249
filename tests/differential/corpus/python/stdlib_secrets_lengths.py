import secrets

token = secrets.token_hex(16)
print(len(token), all(c in "0123456789abcdef" for c in token))
print(len(secrets.token_urlsafe(24)) >= 24, 0 <= secrets.randbelow(10) < 10)
