registry = {}


class Registered(type):
    def __new__(mcls, name, bases, namespace):
        cls = super().__new__(mcls, name, bases, namespace)
        if bases:
            registry[name.lower()] = cls
        return cls


class Plugin(metaclass=Registered):
    pass


class CsvExporter(Plugin):
    pass


class JsonExporter(Plugin):
    pass


print(sorted(registry))
