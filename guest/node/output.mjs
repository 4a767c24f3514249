// The program's output (spec §7.5): console.* and process.stdout/stderr.write
// become OUTPUT frames, bytes decoded as UTF-8 (R-OUTPUT-4).

import { StringDecoder } from 'node:string_decoder';
import { late, send } from './channel.mjs';
import { TYPES } from './codec.mjs';
import {
  ArrayBufferIsView, BufferFrom, MathMin, RegExpPrototypeExec, SafeMap, StringPrototypeCharCodeAt,
  StringPrototypeSlice, StringPrototypeToWellFormed, uncurryThis,
} from './primordials.mjs';
import { isRunning } from './state.mjs';

const StringDecoderPrototypeWrite = uncurryThis(StringDecoder.prototype.write);
const StringDecoderPrototypeEnd = uncurryThis(StringDecoder.prototype.end);
const OUTPUT_CHUNK = 16 * 1024; // characters per OUTPUT frame

export function output(stream, text) {
  // All of it, past output_bytes too: the host keeps the end (R-OUTPUT-3).
  if (!isRunning()) return;
  const clean = StringPrototypeToWellFormed(text); // lone surrogates become U+FFFD (R-OUTPUT-2)
  let start = 0;
  while (start < clean.length) {
    let end = MathMin(start + OUTPUT_CHUNK, clean.length);
    const code = StringPrototypeCharCodeAt(clean, end - 1);
    if (end < clean.length && code >= 0xd800 && code <= 0xdbff) end += 1; // keep the pair
    const piece = StringPrototypeSlice(clean, start, end);
    send(TYPES.OUTPUT, { stream, text: piece });
    start = end;
  }
}

/**
 * Each stream's bytes as text (R-OUTPUT-4): a character split across two
 * writes is held back until the next write to its stream completes it.
 */
const decoders = new SafeMap();

let bytesWritten = false; // since the last flush: a program that writes only text never flushes

/** What the decoders hold, but `except`'s, as U+FFFD: before a CALL, DONE, or a write elsewhere. */
export function flushOutput(except = null) {
  if (!bytesWritten) return;
  bytesWritten = except !== null; // the bytes `except` holds stay held
  for (const entry of decoders) {
    const stream = entry[0];
    // end() leaves the decoder empty, to use again
    const rest = stream === except ? '' : StringDecoderPrototypeEnd(entry[1]);
    if (rest) output(stream, rest);
  }
}

export function captureOutput() {
  for (const [stream, target] of [['stdout', process.stdout], ['stderr', process.stderr]]) {
    const decoder = new StringDecoder('utf8');
    decoders.set(stream, decoder);
    target.write = (chunk, encoding, callback) => {
      // Node's write(chunk[, encoding][, callback]): a string in another
      // encoding (hex, base64, latin1...) stands for its bytes.
      // A typed array goes to the decoder as it is: Buffer.from would call its valueOf.
      const bytes = typeof chunk !== 'string' ? (ArrayBufferIsView(chunk) ? chunk : BufferFrom(chunk))
        : typeof encoding === 'string' && RegExpPrototypeExec(/^utf-?8$/i, encoding) === null
          ? BufferFrom(chunk, encoding) : null;
      flushOutput(bytes === null ? null : stream); // a string completes no held bytes
      if (bytes !== null) bytesWritten = true;
      output(stream, bytes === null ? chunk : StringDecoderPrototypeWrite(decoder, bytes));
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') late.nextTick(done);
      return true;
    };
  }
}
