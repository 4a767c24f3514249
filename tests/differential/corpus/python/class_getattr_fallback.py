class Config:
    def __init__(self, **values):
        self._values = values

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no setting {name!r}") from None


cfg = Config(debug=True, level=3)
print(cfg.debug, cfg.level)
print(cfg.verbose)
