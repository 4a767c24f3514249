lines = ["error: disk full", "info: started", "error: timeout", "debug: x=1"]
errors = (line.split(": ", 1)[1] for line in lines if line.startswith("error"))
upper = (e.upper() for e in errors)
print(list(upper))
print(sum(len(l) for l in lines))
