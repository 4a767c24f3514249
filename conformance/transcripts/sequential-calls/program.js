const x = await add(1, 2)
return await add(x, 3)
