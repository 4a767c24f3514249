return await scale(2, undefined)
