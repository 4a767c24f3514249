class ValidationError(Exception):
    def __init__(self, field, problem):
        self.field = field
        self.problem = problem
        super().__init__(field, problem)

    def __str__(self):
        return f"{self.field}: {self.problem}"


raise ValidationError("email", "is not valid")
