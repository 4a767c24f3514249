class Resource:
    def __init__(self, name):
        self.name = name
        print("acquire", name)

    def __del__(self):
        print("release", self.name)


r = Resource("db")
print("working")
