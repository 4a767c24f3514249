import importlib

for name in ("json", "csv", "notarealmodule"):
    try:
        importlib.import_module(name)
        print(name, "ok")
    except ImportError as e:
        print(type(e).__name__, e)
