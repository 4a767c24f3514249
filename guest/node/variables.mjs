// DONE's variables (spec §7.9, R-VARS-4, R-VARS-5): the values of the program's
// top-level names that fit, and why each other name is left out.

import { countItems, encodePayload, valueItems, variableNameProblem } from './codec.mjs';
import {
  ArrayIsArray, ArrayPrototypePop, ArrayPrototypePush, MapCtor, MapPrototypeGet, MapPrototypeSet, MathMax,
  MathMin, ObjectGetOwnPropertyDescriptor, ObjectGetOwnPropertyNames, ObjectHasOwn, ObjectValues, SafeSet,
  StringPrototypeStartsWith, SymbolCtor, Uint8ArrayCtor, mapKeys,
} from './primordials.mjs';
import { isModule } from './scope.mjs';
import { state } from './state.mjs';
import { ValueModelError, fromWire, toWire } from './values.mjs';

/**
 * DONE's `variables` and `dropped` (R-VARS-4, R-VARS-5): the values of the
 * program's top-level names that fit, and why each other name is left out.
 * `size`: DONE's payload without them.
 */
export function collectVariables(size) {
  const { max_depth: depth, variables_bytes: variablesBytes, frame_bytes: frameBytes } = state.limits;
  let budget = MathMin(variablesBytes, frameBytes - 1024 - size);
  let itemsLeft = valueItems(MathMax(budget, 0));
  const variables = new MapCtor();
  const reasons = [];
  let getters = [];
  if (state.capture) {
    getters = state.capture();
  } else {
    const names = mapKeys(state.run.variables);
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      if (!state.reserved.has(name)) {
        ArrayPrototypePush(getters, [name, () => fromWire(MapPrototypeGet(state.run.variables, name))]);
      }
    }
  }
  for (const entry of state.reserved) ArrayPrototypePush(getters, [entry[0], () => fromWire(entry[1])]);
  const declared = new SafeSet();
  for (let i = 0; i < getters.length; i++) declared.add(getters[i][0]);
  const globals = ObjectGetOwnPropertyNames(globalThis);
  for (let i = 0; i < globals.length; i++) { // `x = 1` without a declaration
    const name = globals[i];
    if (!state.globalsBefore.has(name) && !declared.has(name)) {
      const descriptor = ObjectGetOwnPropertyDescriptor(globalThis, name);
      if (descriptor && ObjectHasOwn(descriptor, 'value')) ArrayPrototypePush(getters, [name, () => descriptor.value]);
    }
  }
  for (let i = 0; i < getters.length; i++) {
    const name = getters[i][0];
    let value;
    try {
      value = getters[i][1]();
    } catch {
      continue; // still in its temporal dead zone: never assigned
    }
    if (value === undefined || typeof value === 'function' || StringPrototypeStartsWith(name, '_') || isModule(value)) continue;
    const problem = variableNameProblem(name);
    if (problem) {
      ArrayPrototypePush(reasons, [name, `the name ${problem}`]);
      continue;
    }
    if (surelyOver(value, budget, itemsLeft)) { // not converted: it could take long
      ArrayPrototypePush(reasons, [name, `$: is over what is left of variables_bytes (${MathMax(budget, 0)} bytes, ${itemsLeft} values)`]);
      continue;
    }
    let wire;
    try {
      wire = toWire(value, depth);
    } catch (err) {
      ArrayPrototypePush(reasons, [name, err instanceof ValueModelError ? err.message : `$: cannot be converted: ${err}`]);
      continue;
    }
    const encoded = encodePayload(oneEntry(name, wire));
    const items = countItems(encoded, itemsLeft + 2);
    if (encoded.length > budget || items - 2 > itemsLeft) {
      ArrayPrototypePush(reasons, [name, `$: takes ${encoded.length} bytes, over what is left of variables_bytes (${MathMax(budget, 0)})`]);
      continue;
    }
    MapPrototypeSet(variables, name, wire);
    budget -= encoded.length;
    itemsLeft -= items - 1;
  }
  const dropped = new MapCtor();
  for (let i = 0; i < reasons.length; i++) { // after the values: the values matter more
    const name = reasons[i][0];
    const reason = reasons[i][1];
    const cost = encodePayload(oneEntry(name, reason)).length;
    if (cost <= budget && itemsLeft >= 2) { // its name and its reason
      MapPrototypeSet(dropped, name, reason);
      budget -= cost;
      itemsLeft -= 2;
    }
  }
  return { dropped, variables };
}

/** A wire map of one entry. */
export function oneEntry(key, value) {
  const map = new MapCtor();
  MapPrototypeSet(map, key, value);
  return map;
}

const LEAVING = SymbolCtor('leaving'); // on surelyOver's stack after an object's values, the object below it

/**
 * Whether `value` holds more than `items` items or `budget` bytes of text,
 * looking at no more. A value that contains itself is not counted again
 * (the conversion names the cycle); one shared by two parents is, as the
 * conversion writes it twice.
 */
function surelyOver(value, budget, items) {
  const stack = [value];
  const within = new SafeSet(); // the objects on the path to the item
  try {
    while (stack.length > 0) {
      const item = ArrayPrototypePop(stack);
      if (item === LEAVING) {
        within.delete(ArrayPrototypePop(stack));
        continue;
      }
      if (--items < 0) return true;
      if (typeof item === 'string' || item instanceof Uint8ArrayCtor) {
        budget -= item.length;
        if (budget < 0) return true;
      } else if (item !== null && typeof item === 'object' && !(item instanceof MapCtor) && !within.has(item)) {
        const values = ArrayIsArray(item) ? item : ObjectValues(item);
        if (!ArrayIsArray(item)) items -= values.length; // the keys
        within.add(item);
        ArrayPrototypePush(stack, item, LEAVING);
        for (let i = 0; i < values.length && i <= items; i++) ArrayPrototypePush(stack, values[i]);
      }
    }
  } catch {
    return false; // a getter threw: the conversion says so
  }
  return false;
}
