try { await fail("bad input") }
catch (e) { return [e.type, e.message, e.code, e.binding] }
