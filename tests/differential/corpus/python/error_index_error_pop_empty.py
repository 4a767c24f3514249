queue = []
queue.pop()
