def send_email(to, subject, body):
    return f"to={to} subject={subject}"


print(send_email("a@b.c", "hi", "text"))
print(send_email("a@b.c", subject="hi"))
