return await print('mine')
