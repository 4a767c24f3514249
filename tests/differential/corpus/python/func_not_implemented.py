class Exporter:
    def export(self, data):
        raise NotImplementedError("subclasses must implement export")


Exporter().export({})
