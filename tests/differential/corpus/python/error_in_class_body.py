class Settings:
    defaults = {"a": 1}
    value = defaults["b"]
