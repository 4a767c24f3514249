// mode: script
class ValidationError extends Error {
  constructor(field, message) {
    super(message);
    this.name = "ValidationError";
    this.field = field;
  }
}

function validate(user) {
  if (!user.email) throw new ValidationError("email", "email is required");
}

try {
  validate({});
} catch (e) {
  console.log(e instanceof ValidationError, e instanceof Error, e.name, e.field, e.message);
}
validate({ name: "x" });
