class AppError(Exception):
    pass


class NotFound(AppError):
    def __init__(self, resource, ident):
        super().__init__(f"{resource} {ident} not found")
        self.resource = resource


def get(ident):
    raise NotFound("user", ident)


try:
    get(7)
except AppError as e:
    print(type(e).__name__, e, e.resource)
get(8)
