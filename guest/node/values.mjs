// The value model's JavaScript mapping (spec §6.1), with the built-ins
// taken at start (primordials.mjs, R-JS-4).

import {
  ArrayIsArray, ArrayPrototypeJoin, ArrayPrototypeMap, BufferIsBuffer, ErrorCtor, JSONStringify,
  MapCtor, MapPrototypeGet, MapPrototypeSet, ObjectDefineProperty, ObjectGetPrototypeOf, ObjectKeys,
  ObjectPrototype, RegExpPrototypeExec, SafeSet, StringCtor, StringPrototypeIsWellFormed, TypeErrorCtor,
  Uint8ArrayCtor, mapKeys,
} from './primordials.mjs';

/** A value outside the model; `path` names the offending part ($.items[3].when). */
export class ValueModelError extends TypeErrorCtor {
  constructor(path, problem) {
    super(`${path}: ${problem}`);
    this.name = 'ValueModelError';
    this.path = path;
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/; // R-VAL-3: the same in every language

function pathOf(trail) {
  return ArrayPrototypeJoin(ArrayPrototypeMap(trail, (key) => {
    if (typeof key === 'number') return `[${key}]`;
    return RegExpPrototypeExec(IDENTIFIER, key) !== null ? `.${key}` : `[${JSONStringify(key)}]`;
  }), '');
}

function kindOf(value) {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'function';
  if (typeof value === 'symbol') return 'symbol';
  const name = value?.constructor?.name;
  return name ? name : typeof value;
}

function isPlainObject(value) {
  const proto = ObjectGetPrototypeOf(value);
  return proto === ObjectPrototype || proto === null;
}

/** Thrown inside the walk; the path is only spelled out for the error. */
class Problem extends ErrorCtor {}

/**
 * JavaScript value → wire value (Maps for maps). `undefined` follows
 * JSON.stringify: dropped from objects, null in arrays and at the top.
 */
export function toWire(value, maxDepth) {
  const trail = []; // keys and indexes down to the value being converted
  try {
    return convert(value, maxDepth, trail, new SafeSet());
  } catch (err) {
    if (err instanceof Problem) throw new ValueModelError(`$${pathOf(trail)}`, err.message);
    throw err;
  }
}

function convert(value, depthLeft, trail, active) {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
      if (!StringPrototypeIsWellFormed(value)) throw new Problem('text is not valid Unicode (a lone surrogate)');
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
  if (value instanceof Uint8ArrayCtor && (value.constructor === Uint8ArrayCtor || BufferIsBuffer(value))) {
    return new Uint8ArrayCtor(value.buffer, value.byteOffset, value.byteLength);
  }
  const isArray = ArrayIsArray(value);
  const isMap = !isArray && value instanceof MapCtor;
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
    out = [];
    for (let i = 0; i < value.length; i++) {
      trail[at] = i;
      out[i] = convert(value[i], depthLeft - 1, trail, active);
    }
  } else {
    out = new MapCtor();
    const keys = isMap ? mapKeys(value) : ObjectKeys(value);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      trail.length = at; // a bad key is reported at its map
      if (typeof key !== 'string') {
        const article = RegExpPrototypeExec(/^[aeiou]/, typeof key) !== null ? 'an' : 'a';
        throw new Problem(`map key ${StringCtor(key)} is ${article} ${typeof key}, not a string`);
      }
      if (!StringPrototypeIsWellFormed(key)) throw new Problem('map key is not valid Unicode (a lone surrogate)');
      const item = isMap ? MapPrototypeGet(value, key) : value[key];
      if (item === undefined) continue;
      trail[at] = key;
      MapPrototypeSet(out, key, convert(item, depthLeft - 1, trail, active));
    }
  }
  trail.length = at;
  active.delete(value);
  return out;
}

/** Wire value → JavaScript value: maps become plain objects with own data properties. */
export function fromWire(value) {
  if (ArrayIsArray(value)) {
    const out = [];
    for (let i = 0; i < value.length; i++) out[i] = fromWire(value[i]);
    return out;
  }
  if (value instanceof MapCtor) {
    const out = {};
    const keys = mapKeys(value);
    for (let i = 0; i < keys.length; i++) {
      ObjectDefineProperty(out, keys[i], {
        __proto__: null, value: fromWire(MapPrototypeGet(value, keys[i])), enumerable: true, writable: true, configurable: true,
      });
    }
    return out;
  }
  return value;
}
