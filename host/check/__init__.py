"""The type check before a run: its checkers, confined like guests,
for Python and for JavaScript and TypeScript."""
