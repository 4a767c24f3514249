from contextlib import ExitStack, contextmanager, redirect_stdout, suppress
import io


@contextmanager
def tag(name):
    print(f"<{name}>")
    yield
    print(f"</{name}>")


with tag("div"), tag("p"):
    print("text")
with suppress(KeyError):
    {}["x"]
buf = io.StringIO()
with redirect_stdout(buf):
    print("captured line")
print(repr(buf.getvalue()))
with ExitStack() as stack:
    for n in ("a", "b"):
        stack.enter_context(tag(n))
