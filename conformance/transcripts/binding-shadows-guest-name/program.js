return await BindingError('mine')
