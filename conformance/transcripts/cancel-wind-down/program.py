import asyncio
try:
    await hang()
except asyncio.CancelledError:
    print('cleanup')
    try:
        await log('bye')
    except BindingError as e:
        print(e.type)
    raise
