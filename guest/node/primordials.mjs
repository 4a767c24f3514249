// The built-in functions and classes the guest uses once the program runs,
// taken when the guest starts (R-JS-4), as Node's own `primordials` are: a
// program may replace or delete `Math`, `JSON.stringify`,
// `Array.prototype.push` or `Map.prototype.get`, and its output, calls,
// value and errors still go out as from an unchanged runtime.
//
// A method becomes a function of its receiver (`ArrayPrototypePush(list,
// x)`), held here; the guest's own maps and sets are SafeMap and SafeSet,
// whose methods and iterators live on frozen prototypes of their own. The
// guest's code iterates its own arrays by index, since an array's iterator
// is shared with the program.

const { bind, call } = Function.prototype;
/** `method` as a function of its receiver and arguments: call.bind(method). */
export const uncurryThis = bind.bind(call);

export const ReflectApply = Reflect.apply;
const ReflectOwnKeys = Reflect.ownKeys;

export const ArrayBufferIsView = ArrayBuffer.isView;
export const ArrayIsArray = Array.isArray;
export const ArrayPrototypeFilter = uncurryThis(Array.prototype.filter);
export const ArrayPrototypeIndexOf = uncurryThis(Array.prototype.indexOf);
export const ArrayPrototypeJoin = uncurryThis(Array.prototype.join);
export const ArrayPrototypeMap = uncurryThis(Array.prototype.map);
export const ArrayPrototypePop = uncurryThis(Array.prototype.pop);
export const ArrayPrototypePush = uncurryThis(Array.prototype.push);
export const ArrayPrototypeShift = uncurryThis(Array.prototype.shift);
export const ArrayPrototypeSlice = uncurryThis(Array.prototype.slice);
export const ArrayPrototypeSplice = uncurryThis(Array.prototype.splice);
export const ArrayPrototypeUnshift = uncurryThis(Array.prototype.unshift);

export const BigIntCtor = BigInt;
export const BigIntPrototypeToString = uncurryThis(BigInt.prototype.toString);

export const BufferByteLength = Buffer.byteLength;
export const BufferFrom = Buffer.from;
export const BufferIsBuffer = Buffer.isBuffer;

export const DataViewCtor = DataView;
export const DataViewPrototypeGetBigUint64 = uncurryThis(DataView.prototype.getBigUint64);
export const DataViewPrototypeGetFloat32 = uncurryThis(DataView.prototype.getFloat32);
export const DataViewPrototypeGetFloat64 = uncurryThis(DataView.prototype.getFloat64);
export const DataViewPrototypeGetUint16 = uncurryThis(DataView.prototype.getUint16);
export const DataViewPrototypeGetUint32 = uncurryThis(DataView.prototype.getUint32);
export const DataViewPrototypeSetBigUint64 = uncurryThis(DataView.prototype.setBigUint64);
export const DataViewPrototypeSetFloat32 = uncurryThis(DataView.prototype.setFloat32);
export const DataViewPrototypeSetFloat64 = uncurryThis(DataView.prototype.setFloat64);
export const DataViewPrototypeSetUint16 = uncurryThis(DataView.prototype.setUint16);
export const DataViewPrototypeSetUint32 = uncurryThis(DataView.prototype.setUint32);

export const ErrorCtor = Error;
export const ErrorCaptureStackTrace = Error.captureStackTrace;
export const RangeErrorCtor = RangeError;
export const TypeErrorCtor = TypeError;

export const JSONStringify = JSON.stringify;

export const MathAbs = Math.abs;
export const MathFloor = Math.floor;
export const MathFround = Math.fround;
export const MathLog2 = Math.log2;
export const MathMax = Math.max;
export const MathMin = Math.min;

export const NumberCtor = Number;
export const NumberIsFinite = Number.isFinite;
export const NumberIsInteger = Number.isInteger;
export const NumberIsNaN = Number.isNaN;
export const NumberIsSafeInteger = Number.isSafeInteger;
export const NumberMaxSafeInteger = Number.MAX_SAFE_INTEGER;

export const ObjectAssign = Object.assign;
export const ObjectDefineProperty = Object.defineProperty;
export const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
export const ObjectGetOwnPropertyNames = Object.getOwnPropertyNames;
export const ObjectGetPrototypeOf = Object.getPrototypeOf;
export const ObjectHasOwn = Object.hasOwn;
export const ObjectIs = Object.is;
export const ObjectKeys = Object.keys;
export const ObjectPrototype = Object.prototype;
export const ObjectPrototypeToString = uncurryThis(Object.prototype.toString);
export const ObjectValues = Object.values;

export const PromiseCtor = Promise;

export const RegExpPrototypeExec = uncurryThis(RegExp.prototype.exec);

export const StringCtor = String;
export const StringPrototypeCharCodeAt = uncurryThis(String.prototype.charCodeAt);
export const StringPrototypeIsWellFormed = uncurryThis(String.prototype.isWellFormed);
export const StringPrototypeSlice = uncurryThis(String.prototype.slice);
export const StringPrototypeSplit = uncurryThis(String.prototype.split);
export const StringPrototypeStartsWith = uncurryThis(String.prototype.startsWith);
export const StringPrototypeToWellFormed = uncurryThis(String.prototype.toWellFormed);

export const SymbolCtor = Symbol;
const SymbolIterator = Symbol.iterator;

export const TextDecoderPrototypeDecode = uncurryThis(TextDecoder.prototype.decode);
export const TextEncoderPrototypeEncode = uncurryThis(TextEncoder.prototype.encode);
export const TextEncoderPrototypeEncodeInto = uncurryThis(TextEncoder.prototype.encodeInto);

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
export const TypedArrayPrototypeSet = uncurryThis(TypedArrayPrototype.set);
export const TypedArrayPrototypeSlice = uncurryThis(TypedArrayPrototype.slice);
export const TypedArrayPrototypeSubarray = uncurryThis(TypedArrayPrototype.subarray);
export const Uint8ArrayCtor = Uint8Array;

export const Int32ArrayCtor = Int32Array;

export const MapCtor = Map;
const MapPrototypeEntries = uncurryThis(Map.prototype.entries);
const MapPrototypeKeys = uncurryThis(Map.prototype.keys);
const MapIteratorPrototypeNext = uncurryThis(Object.getPrototypeOf(new Map().keys()).next);
export const MapPrototypeGet = uncurryThis(Map.prototype.get);
export const MapPrototypeHas = uncurryThis(Map.prototype.has);
export const MapPrototypeSet = uncurryThis(Map.prototype.set);
const SetIteratorPrototypeNext = uncurryThis(Object.getPrototypeOf(new Set().values()).next);

/** The keys of a Map of the program's, read with the guest's own functions. */
export function mapKeys(map) {
  const keys = [];
  const iterator = MapPrototypeKeys(map);
  for (let step = MapIteratorPrototypeNext(iterator); !step.done; step = MapIteratorPrototypeNext(iterator)) {
    ArrayPrototypePush(keys, step.value);
  }
  return keys;
}

/**
 * An iterator class over `factory(iterable)` whose `next` is the built-in
 * one, on a frozen prototype of its own (the program cannot reach it).
 */
function safeIterator(factory, next) {
  class SafeIterator {
    constructor(iterable) {
      this.iterator = factory(iterable);
    }

    next() {
      return next(this.iterator);
    }

    [SymbolIterator]() {
      return this;
    }
  }
  Object.setPrototypeOf(SafeIterator.prototype, null);
  Object.freeze(SafeIterator.prototype);
  return SafeIterator;
}

/**
 * `safe` (a subclass of `unsafe`) with every method of `unsafe.prototype`
 * its own, on a frozen prototype: a program that replaces Map.prototype.get
 * does not reach the guest's maps. Iterators come from `iterators`.
 */
function makeSafe(unsafe, safe, iterators = {}) {
  for (const key of ReflectOwnKeys(unsafe.prototype)) {
    if (key === 'constructor') continue;
    const descriptor = Object.getOwnPropertyDescriptor(unsafe.prototype, key);
    if (typeof descriptor.value === 'function' && iterators[key] !== undefined) {
      const Iterator = iterators[key];
      descriptor.value = function () { return new Iterator(this); };
    }
    Object.defineProperty(safe.prototype, key, descriptor);
  }
  Object.freeze(safe.prototype);
  Object.freeze(safe);
  return safe;
}

const SafeMapEntries = safeIterator(MapPrototypeEntries, MapIteratorPrototypeNext);
const SafeMapKeys = safeIterator(MapPrototypeKeys, MapIteratorPrototypeNext);
const SafeMapValues = safeIterator(uncurryThis(Map.prototype.values), MapIteratorPrototypeNext);
const SafeSetValues = safeIterator(uncurryThis(Set.prototype.values), SetIteratorPrototypeNext);

// Explicit constructors: V8's implicit one spreads its arguments through the
// array iterator the program can replace.
export const SafeMap = makeSafe(Map, class SafeMap extends Map {
  constructor(entries) { super(entries); }
}, {
  entries: SafeMapEntries, [SymbolIterator]: SafeMapEntries, keys: SafeMapKeys, values: SafeMapValues,
});
export const SafeSet = makeSafe(Set, class SafeSet extends Set {
  constructor(items) { super(items); }
}, {
  values: SafeSetValues, keys: SafeSetValues, [SymbolIterator]: SafeSetValues,
});
export const SafeWeakMap = makeSafe(WeakMap, class SafeWeakMap extends WeakMap {
  constructor(items) { super(items); }
});
export const SafeWeakSet = makeSafe(WeakSet, class SafeWeakSet extends WeakSet {
  constructor(items) { super(items); }
});
