class Temperature:
    def __init__(self, celsius):
        self._celsius = celsius

    @property
    def fahrenheit(self):
        return self._celsius * 9 / 5 + 32

    @fahrenheit.setter
    def fahrenheit(self, value):
        self._celsius = (value - 32) * 5 / 9

    @property
    def celsius(self):
        return self._celsius


t = Temperature(25)
print(t.fahrenheit)
t.fahrenheit = 212
print(round(t.celsius, 2))
