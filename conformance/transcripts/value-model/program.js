return await echo([null, true, -5, 2n ** 70n, 1.5, "é", new Uint8Array([0, 1]), {k: [1]}, {zeta: 1, alpha: 2, mid: 3}, [], {}, [1, null, null]])
