import textwrap

paragraph = ("Python is a high-level, general-purpose programming language. Its design "
             "philosophy emphasizes code readability with the use of significant indentation.")
for width in (40, 60):
    print(f"--- width {width} ---")
    print(textwrap.fill(paragraph, width))
words = paragraph.split()
print(len(words), max(words, key=len))
