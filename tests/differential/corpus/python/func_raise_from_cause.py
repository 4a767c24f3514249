class ConfigError(Exception):
    pass


def read(cfg, key):
    try:
        return cfg[key]
    except KeyError as e:
        raise ConfigError(f"missing key {key}") from e


read({}, "token")
