print('café ☃ 😀')
