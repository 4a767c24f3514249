def parse_port(text):
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"invalid port: {text!r}") from None


parse_port("eighty")
