def load(path):
    try:
        raise FileNotFoundError(2, "No such file or directory", path)
    except FileNotFoundError as e:
        e.add_note(f"while loading configuration from {path}")
        e.add_note("hint: create the file first")
        raise


load("settings.toml")
