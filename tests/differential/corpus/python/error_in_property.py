class Box:
    @property
    def volume(self):
        return self.w * self.h * self.d


Box().volume
