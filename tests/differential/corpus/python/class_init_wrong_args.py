class User:
    def __init__(self, name, email):
        self.name = name
        self.email = email


u = User("ann")
