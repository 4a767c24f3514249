import textwrap

text = ("The quick brown fox jumps over the lazy dog. " * 3).strip()
print(textwrap.fill(text, width=30))
print(textwrap.shorten(text, width=40, placeholder=" [...]"))
print(textwrap.indent("a\nb", "> "))
print(textwrap.dedent("""
    indented
      more
    back
"""))
