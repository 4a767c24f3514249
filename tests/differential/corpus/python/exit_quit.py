print("quitting")
quit()
