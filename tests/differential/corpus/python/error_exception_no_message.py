class EmptyError(Exception):
    pass


raise EmptyError
