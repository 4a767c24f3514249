return await echo([None, True, -5, 2**70, 1.5, "é", b"\x00\x01", {"k": [1]}, {"zeta": 1, "alpha": 2, "mid": 3}, [], {}, [1, None, None]])
