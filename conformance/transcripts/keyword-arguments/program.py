return await add(1, b=2)
