return ['a', 'b\ud800']
