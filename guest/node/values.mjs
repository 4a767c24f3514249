// The value model's JavaScript mapping (spec §6.1).

/** A value outside the model; `path` names the offending part ($.items[3].when). */
export class ValueModelError extends TypeError {
  constructor(path, problem) {
    super(`${path}: ${problem}`);
    this.name = 'ValueModelError';
    this.path = path;
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function childPath(path, key) {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
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

/**
 * JavaScript value → wire value (Maps for maps). `undefined` follows
 * JSON.stringify: dropped from objects, null in arrays and at the top.
 */
export function toWire(value, maxDepth, path = '$', active = new Set()) {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) {
        throw new ValueModelError(path, 'text is not valid Unicode (a lone surrogate)');
      }
      return value;
    case 'boolean':
    case 'bigint':
      return value;
    case 'number':
      return value; // the encoder picks int for safe integers, float otherwise
    default:
      break;
  }
  if (typeof value !== 'object') throw new ValueModelError(path, `${kindOf(value)} is outside the value model`);
  if (value instanceof Uint8Array && (value.constructor === Uint8Array || Buffer.isBuffer(value))) {
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  }
  const container = Array.isArray(value) || value instanceof Map || isPlainObject(value);
  if (!container) throw new ValueModelError(path, `${kindOf(value)} is outside the value model`);
  if (active.has(value)) throw new ValueModelError(path, 'cycle: the value contains itself');
  if (maxDepth <= 0) throw new ValueModelError(path, 'nested too deeply');
  active.add(value);
  try {
    if (Array.isArray(value)) {
      return value.map((item, i) => toWire(item, maxDepth - 1, `${path}[${i}]`, active));
    }
    const out = new Map();
    const entries = value instanceof Map ? value.entries() : Object.entries(value);
    for (const [key, item] of entries) {
      if (typeof key !== 'string') {
        throw new ValueModelError(path, `map key ${String(key)} is a ${typeof key}, not a string`);
      }
      if (!key.isWellFormed()) {
        throw new ValueModelError(path, 'map key is not valid Unicode (a lone surrogate)');
      }
      if (item === undefined) continue;
      out.set(key, toWire(item, maxDepth - 1, childPath(path, key), active));
    }
    return out;
  } finally {
    active.delete(value);
  }
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
