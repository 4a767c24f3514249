import re

text = "Contact: ann@example.com, bob@test.org; phone 555-1234 or 555-9876."
print(re.findall(r"[\w.]+@[\w.]+", text))
print(re.findall(r"\d{3}-\d{4}", text))
print(re.sub(r"(\d{3})-(\d{4})", r"\2-\1", text))
m = re.search(r"(?P<user>\w+)@(?P<domain>[\w.]+)", text)
print(m.group("user"), m.group("domain"), m.span())
