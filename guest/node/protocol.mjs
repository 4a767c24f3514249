// The host's frames (spec §8): decoded, checked against the state table, acted on.

import { exit, fail, holdLoopForCalls } from './channel.mjs';
import {
  CODES, DEFAULT_MAX_DEPTH, DEFAULT_VALUE_BYTES, ProtocolError, TYPES, decodeMessage, nextState,
} from './codec.mjs';
import { cancel, stop } from './lifecycle.mjs';
import { ArrayPrototypeShift, NumberCtor } from './primordials.mjs';
import { start } from './run.mjs';
import { state } from './state.mjs';

/** The socket's bytes: each frame decoded and acted on; a protocol error is ERROR, and the end. */
export function onData(chunk) {
  state.warming = false; // the host spoke (its RUN): whatever is left of the warm-up is skipped
  try {
    state.decoder.push(chunk);
    for (let frame = state.decoder.next(); frame !== null; frame = state.decoder.next()) {
      if (frame.type >= 0x80) continue; // no extension negotiated (R-FRAME-7)
      onMessage(decodeMessage(frame, state.limits?.max_depth ?? DEFAULT_MAX_DEPTH,
        state.limits?.value_bytes ?? DEFAULT_VALUE_BYTES));
    }
  } catch (err) {
    fail(err instanceof ProtocolError ? err : new ProtocolError(CODES.INTERNAL_ERROR, err.message));
  }
}

/** The host closed the connection (R-TRANS-4): a frame cut short is a protocol error; the run ends. */
export function onEof() {
  try {
    state.decoder.checkEof();
  } catch (err) {
    fail(err);
  }
  // R-TRANS-4: no host is left to answer a call; fd 3 closes with this
  // handler (its writable side was never open), so DONE goes out now.
  stop('the host closed the connection');
}

/** A message of the host's, if the state table allows it: RUN, RESULT, CANCEL or ERROR. */
export function onMessage({ type, name, body }) {
  if (nextState(state.phase, 'host', name) === undefined) { // the state table (spec §8)
    throw new ProtocolError(CODES.UNEXPECTED_MESSAGE, `${name} in state ${state.phase}`);
  }
  if (type === TYPES.RUN) {
    start(body);
  } else if (type === TYPES.RESULT) {
    const call = state.inFlight.get(NumberCtor(body.id));
    if (call === undefined && state.abandoned.delete(NumberCtor(body.id))) return;
    if (call === undefined) {
      throw new ProtocolError(CODES.INVALID_CALL_ID, `RESULT for unknown call ${body.id}`);
    }
    state.inFlight.delete(NumberCtor(body.id));
    if (state.phase === 'FINISHED') return; // late result (R-STATE-4)
    call.resolve(body);
    const next = ArrayPrototypeShift(state.waiting);
    if (next) next();
    holdLoopForCalls();
  } else if (type === TYPES.CANCEL) {
    if (state.phase === 'RUNNING') cancel(body.reason); // else late (R-STATE-4)
  } else if (type === TYPES.ERROR) {
    exit(1); // R-ERR-2
  }
}
