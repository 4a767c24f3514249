print("using exit()")
exit(2)
