handler = None
handler("event")
