console.log('printed')
require('fs').writeSync(1, 'raw\n')
console.log('framed')
return 1
