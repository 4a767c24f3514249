await fail("bad input")
