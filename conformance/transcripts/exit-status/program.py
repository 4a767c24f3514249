print('failing')
exit(3)
