return new Array(2000).fill(0)
