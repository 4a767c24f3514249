return await scale(2)
