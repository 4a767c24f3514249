raise TimeoutError("operation took too long")
