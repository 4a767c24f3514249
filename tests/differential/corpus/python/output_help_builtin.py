help(len)
