import { join } from 'node:path'
import * as os from 'os'
console.log(join('a', 'b'), typeof os.cpus)
throw new TypeError('line 4')
