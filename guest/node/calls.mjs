// Binding calls (spec §7.3, §7.4): each binding an async function in the
// program's scope; a call sends CALL and settles with its RESULT.

import { positionalCount } from './arguments.mjs';
import { holdLoopForCalls, send } from './channel.mjs';
import { Encoded, TYPES, encodePayload, valueExcess } from './codec.mjs';
import { BindingError, Cancelled, fromProgram } from './errors.mjs';
import { flushOutput } from './output.mjs';
import {
  ArrayPrototypeMap, ArrayPrototypePush, ArrayPrototypeSlice, MapCtor, PromiseCtor, RangeErrorCtor,
  TypeErrorCtor,
} from './primordials.mjs';
import { isRunning, state } from './state.mjs';
import { ValueModelError, fromWire, toWire } from './values.mjs';

/** A binding shows the host's description: `doc`, `signature`, and toString() as declared. */
export function makeBinding({ name, signature, doc }) {
  const positional = positionalCount(signature);
  // Not async: an async function returning call()'s promise would settle
  // through its `then`, which the program may have replaced (R-JS-4).
  const binding = (...args) => call(name, args, binding, positional);
  const text = `${doc ? `${doc}\n` : ''}declare function ${name}${signature ?? '(...args: any[]): Promise<any>'};`;
  Object.defineProperties(binding, {
    name: { value: name },
    doc: { value: doc ?? null },
    signature: { value: signature ?? null },
    toString: { value: () => text },
  });
  return binding;
}

export async function call(name, programArgs, binding, positional = null) {
  const { max_depth: depth, value_bytes: maxBytes, max_calls_in_flight: maxCalls } = state.limits;
  // Trailing undefined arguments are left out (§6.1): JavaScript treats them
  // as missing, so the binding's defaults apply; one before a defined argument is null.
  let count = programArgs.length;
  // Past the parameters the binding declares, arguments are ignored, as in
  // JavaScript (the host leaves them out too): `xs.map(binding)` does not
  // send the whole array with each element.
  if (positional !== null && count > positional) count = positional;
  while (count > 0 && programArgs[count - 1] === undefined) count -= 1;
  const wireArgs = ArrayPrototypeMap(ArrayPrototypeSlice(programArgs, 0, count), (arg, i) => {
    try {
      return toWire(arg, depth);
    } catch (err) {
      if (err instanceof ValueModelError) {
        throw fromProgram(new TypeErrorCtor(`${name}() argument ${i + 1}: ${err.message}`), binding);
      }
      throw err;
    }
  });
  const args = new Encoded(encodePayload(wireArgs)); // once: for the size and to send
  // As [args, kwargs], kwargs empty (a0): 2 bytes and 2 items more.
  const excess = valueExcess(args.bytes, maxBytes, -2, -2);
  if (excess?.kind === 'bytes') {
    throw fromProgram(new RangeErrorCtor(`${name}() arguments take ${excess.amount} bytes, over the limit of ${maxBytes} (value_bytes)`), binding);
  }
  if (excess !== null) {
    throw fromProgram(new RangeErrorCtor(`${name}() arguments hold more than ${excess.amount} values (value_bytes / 16)`), binding);
  }
  let queued = false;
  while (state.inFlight.size >= maxCalls && isRunning()) { // R-CALL-3: queue in the guest
    queued = true;
    await new PromiseCtor((resolve) => ArrayPrototypePush(state.waiting, resolve));
  }
  if (state.phase === 'FINISHED') return new PromiseCtor(() => {}); // the run is over
  // R-CANCEL-2: a queued call is cancelled with the rest
  if (queued && state.phase === 'CANCELLING') throw fromProgram(new Cancelled(state.cancelReason), call);
  const id = ++state.lastCallId;
  const settled = new PromiseCtor((resolve) => state.inFlight.set(id, { resolve }));
  holdLoopForCalls();
  flushOutput();
  send(TYPES.CALL, { id, name, args, kwargs: new MapCtor() });
  const result = await settled;
  // Raised here, inside the program's await chain, so the stack shows its line.
  if (result.cancelled !== undefined) throw fromProgram(new Cancelled(result.cancelled), call);
  if (result.error) throw fromProgram(new BindingError(name, result.error), call);
  return fromWire(result.value);
}
