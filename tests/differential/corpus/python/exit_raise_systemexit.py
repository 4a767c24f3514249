print("raising SystemExit")
raise SystemExit(5)
