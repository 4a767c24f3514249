return await add(1, 2, undefined, undefined)
