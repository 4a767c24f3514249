"""The host's functions as a program sees them: descriptions (JSON
Schema), argument checks, stubs, and the text a model reads."""
