stack = []
stack.push(1)
