// The warm-up of a pooled guest (--warm) and of a startup snapshot: the paths
// of a run are run once before RUN (V8 compiles code at its first use).

import net from 'node:net';
import { reads, writeAll } from './channel.mjs';
import { FrameDecoder, TYPES, decodeMessage, encodeFrame, encodeMessage, encodePayload } from './codec.mjs';
import { compile } from './compile.mjs';
import { finishWithValue } from './lifecycle.mjs';
import { flushOutput, output } from './output.mjs';
import { onMessage } from './protocol.mjs';
import { start } from './run.mjs';
import { state } from './state.mjs';
import { fromWire, toWire } from './values.mjs';

export function warmUp(steps) {
  if (!state.warming || steps.length === 0) return;
  steps.shift()();
  setImmediate(() => warmUp(steps));
}

/**
 * The steps, one a turn of the event loop; `typescript`: the guest's run will
 * be TypeScript (its own pool), so the type stripper is loaded too, as it
 * is at a TypeScript program's first compile (a WebAssembly module).
 */
export function warmSteps({ typescript = false } = {}) {
  return [
    ...codeSteps(),
    compileRunPath,
    warmConsole,
    warmReads,
    () => compile('1', 'javascript', [], { lastExpression: true }), // loads the parser
    ...(typescript ? [() => compile('const n: number = 1;\nreturn n;', 'typescript', [])] : []),
  ];
}

/**
 * The warm-up steps that run only the guest's own code: no stream, socket,
 * handle or package. Run while a startup snapshot is built, what V8 compiles
 * for them is in the snapshot.
 */
export function codeSteps() {
  const limits = { output_bytes: 1 << 20, value_bytes: 1 << 20, frame_bytes: 1 << 24,
    max_depth: 64, max_calls_in_flight: 64, memory_bytes: 1 << 28 };
  const run = encodeMessage(TYPES.RUN, { source: 'return 1', language: 'javascript',
    bindings: [{ name: 'f' }], limits });
  const sample = [{ id: 1, name: 'x', ok: true, at: 1.5, data: new Uint8Array(2) }, 'é', null];
  const codec = () => {
    const decoder = new FrameDecoder();
    decoder.push(run);
    decodeMessage(decoder.next());
    fromWire(toWire(sample, 64));
    encodeFrame(TYPES.DONE, encodePayload(new Map([['value', toWire(sample, 64)]])));
    encodeMessage(TYPES.OUTPUT, { stream: 'stdout', text: 'hello\n' });
  };
  return [
    ...Array(30).fill(codec), // many times, one a turn: V8 optimizes what runs often
    () => compile('return 1', 'javascript', ['f']),
  ];
}

/**
 * V8 compiles a function at its first call: the functions of a run's own
 * path are called here where each returns or throws at its first statement
 * (there is no run yet), so that the run does not wait for their compiling.
 */
function compileRunPath() {
  const refused = [
    () => start({ language: '' }), // no such language
    () => onMessage({ name: 'RESULT' }), // not before RUN
    () => finishWithValue(null), // no limits yet
  ];
  for (const attempt of refused) {
    try {
      attempt();
    } catch {
      // as expected
    }
  }
  output('stdout', ''); // not running: nothing is sent
  flushOutput(); // no decoder yet: nothing is held
  writeAll(new Uint8Array(0));
}

/**
 * console.* formats through code that is compiled on first use too; its
 * writes go nowhere here (the real ones would reach the raw output).
 */
function warmConsole() {
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((stream) => stream.write);
  for (const stream of streams) stream.write = () => true;
  try {
    console.log('%s %d', 'warm', 1, { a: [1.5, 'b'] });
    console.error('warm');
  } finally {
    streams.forEach((stream, i) => { stream.write = writes[i]; });
  }
}

/**
 * The first read on a socket runs Node's read path for the first time
 * (costly cold): a pooled guest runs it once on a connection to itself over
 * an abstract Unix socket (no file, nothing on fd 3), closed at once. Any
 * other process that connects meanwhile only has its connection closed.
 */
function warmReads() {
  const name = `\0tether-warm-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const server = net.createServer((peer) => {
    peer.on('error', () => {});
    peer.end('x');
  });
  server.on('error', () => {});
  server.listen(name, () => {
    const client = net.connect({ path: name, onread: reads(() => client.destroy()) });
    client.on('error', () => {});
    client.on('close', () => server.close());
  });
  server.unref();
}
