import io
import sys

buf = io.StringIO()
print("into buffer", file=buf)
print("buffer held:", repr(buf.getvalue()))
print("explicit stdout", file=sys.stdout)
print("explicit dunder stdout", file=sys.__stdout__)
print("dunder stderr", file=sys.__stderr__)
