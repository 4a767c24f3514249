class Node:
    def __init__(self, value):
        self.value = value
        self.children = []

    def add(self, child):
        self.children.append(child)
        return child

    def __repr__(self):
        return f"Node({self.value}, {self.children})"


root = Node(1)
root.add(Node(2)).add(Node(3))
root.add(Node(4))
print(root)
