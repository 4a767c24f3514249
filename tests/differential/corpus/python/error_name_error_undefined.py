print(undefined_variable)
