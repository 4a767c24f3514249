return await add(1, 2)
