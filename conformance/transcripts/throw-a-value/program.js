throw 'oops'
