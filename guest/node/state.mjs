// The Node guest's state for its one run (spec §8): its phase, its calls in
// flight, the program's limits and names, as one object the guest's modules share.

import { FrameDecoder } from './codec.mjs';
import { SafeMap, SafeSet } from './primordials.mjs';

export const LANGUAGES = ['javascript', 'typescript'];
export const FILENAME = '<program>';

export const state = {
  phase: 'AWAIT_RUN', // then RUNNING, CANCELLING, FINISHED (spec §8)
  lastCallId: 0,
  inFlight: new SafeMap(), // call id -> {resolve}: settled with the RESULT's body
  abandoned: new SafeSet(), // ids cancelled in the program whose RESULT may still come
  cancelReason: '',
  waiting: [], // calls queued beyond max_calls_in_flight
  limits: null,
  decoder: new FrameDecoder(),
  run: null,
  globalsBefore: new SafeSet(), // the global object's names before the program ran
  reserved: new SafeMap(), // RUN's variables whose names JavaScript reserves
  capture: null, // () => [[name, getter]...] of the program's top-level names (§7.9)
  returned: null, // {value} once the program's body has returned
  exiting: false, // the program's 'exit' listeners are running
  meta: false, // the program reads import.meta
  warming: false, // a pooled guest runs its own paths once while it waits for RUN (warm.mjs)
};

export const isRunning = () => state.phase === 'RUNNING' || state.phase === 'CANCELLING';
export const callsPending = () => state.inFlight.size > 0 || state.waiting.length > 0;
