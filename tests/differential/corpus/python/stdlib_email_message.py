from email.message import EmailMessage

msg = EmailMessage()
msg["Subject"] = "Report"
msg["From"] = "a@example.com"
msg["To"] = "b@example.com"
msg.set_content("Numbers attached.")
print(msg["Subject"], msg.get_content_type())
print(msg.get_content().strip())
