try { await fail("bad input") }
catch (e) { return [e.type, e.code] }
