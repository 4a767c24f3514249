console.log('not reached')
import { helper } from './helpers.js'
