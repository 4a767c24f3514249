try:
    await echo('x' * 5000)
except ValueError as e:
    return 'value_bytes' in str(e)
