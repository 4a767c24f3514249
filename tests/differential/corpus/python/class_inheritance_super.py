class Animal:
    def __init__(self, name):
        self.name = name

    def speak(self):
        return "..."

    def describe(self):
        return f"{self.name} says {self.speak()}"


class Dog(Animal):
    def speak(self):
        return "woof"


class Puppy(Dog):
    def speak(self):
        return super().speak() + "!"


for pet in (Animal("generic"), Dog("rex"), Puppy("bit")):
    print(pet.describe())
