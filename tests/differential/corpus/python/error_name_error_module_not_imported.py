print(os.getcwd())
