return await echo([None, True, -5, 2**70, 1.5, "é", b"\x00\x01", {"k": [1]}])
