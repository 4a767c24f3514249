import traceback


def where():
    traceback.print_stack()


where()
print(len(traceback.extract_stack()))
