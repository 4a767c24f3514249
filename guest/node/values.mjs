// The value model's JavaScript mapping (spec §6.1).

/** A value outside the model; `path` names the offending part ($.items[3].when). */
export class ValueModelError extends TypeError {
  constructor(path, problem) {
    super(`${path}: ${problem}`);
    this.name = 'ValueModelError';
    this.path = path;
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/; // R-VAL-3: the same in every language

function pathOf(trail) {
  return trail.map((key) => {
    if (typeof key === 'number') return `[${key}]`;
    return IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  }).join('');
}

function kindOf(value) {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'function';
  if (typeof value === 'symbol') return 'symbol';
  const name = value?.constructor?.name;
  return name ? name : typeof value;
}

function isPlainObject(value) {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Thrown inside the walk; the path is only spelled out for the error. */
class Problem extends Error {}

/**
 * JavaScript value → wire value (Maps for maps). `undefined` follows
 * JSON.stringify: dropped from objects, null in arrays and at the top.
 */
export function toWire(value, maxDepth) {
  const trail = []; // keys and indexes down to the value being converted
  try {
    return convert(value, maxDepth, trail, new Set());
  } catch (err) {
    if (err instanceof Problem) throw new ValueModelError(`$${pathOf(trail)}`, err.message);
    throw err;
  }
}

function convert(value, depthLeft, trail, active) {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw new Problem('text is not valid Unicode (a lone surrogate)');
      return value;
    case 'boolean':
    case 'bigint':
    case 'number': // the encoder picks int for safe integers, float otherwise
      return value;
    case 'object':
      break;
    default:
      throw new Problem(`${kindOf(value)} is outside the value model`);
  }
  if (value instanceof Uint8Array && (value.constructor === Uint8Array || Buffer.isBuffer(value))) {
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  }
  const isArray = Array.isArray(value);
  const isMap = !isArray && value instanceof Map;
  if (!isArray && !isMap && !isPlainObject(value)) {
    const hint = typeof value.then === 'function' ? '; did you forget `await`?' : '';
    throw new Problem(`${kindOf(value)} is outside the value model${hint}`);
  }
  if (active.has(value)) throw new Problem('cycle: the value contains itself');
  if (depthLeft <= 0) throw new Problem('nested too deeply');
  active.add(value);
  const at = trail.length;
  let out;
  if (isArray) {
    out = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      trail[at] = i;
      out[i] = convert(value[i], depthLeft - 1, trail, active);
    }
  } else {
    out = new Map();
    const keys = isMap ? [...value.keys()] : Object.keys(value);
    for (const key of keys) {
      trail.length = at; // a bad key is reported at its map
      if (typeof key !== 'string') {
        throw new Problem(`map key ${String(key)} is ${/^[aeiou]/.test(typeof key) ? 'an' : 'a'} ${typeof key}, not a string`);
      }
      if (!key.isWellFormed()) throw new Problem('map key is not valid Unicode (a lone surrogate)');
      const item = isMap ? value.get(key) : value[key];
      if (item === undefined) continue;
      trail[at] = key;
      out.set(key, convert(item, depthLeft - 1, trail, active));
    }
  }
  trail.length = at;
  active.delete(value);
  return out;
}

/** Wire value → JavaScript value: maps become plain objects with own data properties. */
export function fromWire(value) {
  if (Array.isArray(value)) return value.map(fromWire);
  if (value instanceof Map) {
    const out = {};
    for (const [key, item] of value) {
      Object.defineProperty(out, key, {
        value: fromWire(item), enumerable: true, writable: true, configurable: true,
      });
    }
    return out;
  }
  return value;
}
