result = (
    1 +
    2 +
    undefined_name
)
