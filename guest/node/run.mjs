// A run (spec §7.2): RUN made the program's scope, and the program started.

import { makeBinding } from './calls.mjs';
import { holdLoopForCalls } from './channel.mjs';
import { CODES, ProtocolError } from './codec.mjs';
import { IMPORT, META, REGISTER, compile } from './compile.mjs';
import { BindingError, Cancelled, describe } from './errors.mjs';
import { EventEmitterPrototypeListeners, finish, programExit } from './lifecycle.mjs';
import { captureOutput } from './output.mjs';
import { ObjectGetOwnPropertyNames, SafeSet } from './primordials.mjs';
import { commonJs, importModule, isParameterName, programMeta } from './scope.mjs';
import { LANGUAGES, state } from './state.mjs';
import { fromWire } from './values.mjs';

/**
 * Starts the program RUN carries: its output captured, process.exit its own
 * (R-DONE-8), its scope made (require and CommonJS's names, BindingError,
 * Cancelled, its bindings, its variables), its error listeners set, its
 * source compiled; then its body runs in a microtask of its own, and the run
 * ends as lifecycle.mjs says.
 */
export function start(run) {
  if (!LANGUAGES.includes(run.language)) {
    throw new ProtocolError(CODES.LANGUAGE_UNSUPPORTED, `cannot run ${run.language}`);
  }
  state.limits = run.limits;
  state.run = run;
  state.decoder.maxFrameBytes = run.limits.frame_bytes;
  state.phase = 'RUNNING';
  captureOutput();
  process.exit = programExit;
  const scope = new Map([
    ...commonJs(),
    ['BindingError', BindingError],
    ['Cancelled', Cancelled],
    [IMPORT, importModule],
    [META, null], // made once the program is compiled: only a module reads it
  ]);
  for (const binding of run.bindings) scope.set(binding.name, makeBinding(binding));
  const variables = new Map();
  for (const [name, value] of run.variables ?? []) {
    // A name JavaScript reserves (`default`, from a Python run) cannot be in
    // scope; it goes back in DONE as it came.
    if (isParameterName(name)) variables.set(name, value);
    else state.reserved.set(name, value);
  }
  for (const [name, value] of variables) scope.set(name, fromWire(value));
  const capture = run.variables !== undefined;
  if (capture) state.globalsBefore = new SafeSet(ObjectGetOwnPropertyNames(globalThis));
  if (capture || run.last_expression) {
    const register = (get) => { state.capture = capture ? get : null; };
    // The variables' values, for a body that declares one again with `var` (toplevel.mjs).
    register.initial = Object.fromEntries([...variables.keys()].map((name) => [name, scope.get(name)]));
    scope.set(REGISTER, register);
  }
  for (const event of ['uncaughtException', 'unhandledRejection']) {
    const ending = (err) => {
      // As in plain Node, a listener of the program's own handles the error
      // and the program goes on; with none, the error ends the run.
      const listeners = EventEmitterPrototypeListeners(process, event);
      for (let i = 0; i < listeners.length; i++) if (listeners[i] !== ending) return;
      finish({ error: describe(err) });
    };
    process.on(event, ending);
  }
  let program;
  try {
    program = compile(run.source, run.language, [...scope.keys()].filter((n) => n !== REGISTER),
      { capture, lastExpression: run.last_expression, variables: [...variables.keys()] });
  } catch (err) {
    finish({ error: describe(err, true) });
    return;
  }
  if (state.meta) {
    scope.set(META, programMeta());
    process.argv[1] = scope.get(META).filename; // `import.meta.url === pathToFileURL(argv[1]).href`
  }
  // Started by a microtask of its own, the program has none of the guest's
  // frames (and paths) below its own in the stacks it sees. What it returns
  // is sent when Node's loop has nothing left to do (atExit).
  Promise.resolve().then(program(...scope.values()))
    .then((value) => { state.returned = { value }; },
      (err) => finish({ error: describe(err) })); // at once, as Node ends at an uncaught error
  holdLoopForCalls();
}
