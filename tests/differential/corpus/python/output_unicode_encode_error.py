"résumé".encode("ascii")
