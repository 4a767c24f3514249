// tether's Node.js guest: runs one JavaScript or TypeScript program and
// speaks the tether protocol on fd 3 (spec §7, guest role), or, with
// TETHER_TRANSPORT=stdio, on stdin/stdout (spec §3.1).
//
//   node --disable-warning=ExperimentalWarning main.mjs --cwd DIR [--warm [--typescript]]
//
// The program is the body of an async function: top-level await, `return x`,
// each binding an async function in scope. console.* and
// process.stdout/stderr.write become OUTPUT frames. Frames are written
// synchronously, so nothing printed is lost if the program then blocks the
// event loop; reads come through the event loop.
//
// This file starts the guest; the rest, by concern: protocol.mjs (the host's
// frames), run.mjs (a RUN started), compile.mjs, scope.mjs and imports.mjs
// (the program made a function, and what it has in scope), calls.mjs
// (binding calls), output.mjs, lifecycle.mjs (how a run ends), errors.mjs and
// variables.mjs (what DONE says), channel.mjs, state.mjs, warm.mjs, and
// codec.mjs, values.mjs, primordials.mjs beneath them.

import fs from 'node:fs';
import net from 'node:net';
import v8 from 'node:v8';
import { channel, exit, reads, send, stdioChannel, takeLate } from './channel.mjs';
import { PROTOCOL_VERSION, TYPES } from './codec.mjs';
import { prepare } from './lifecycle.mjs';
import { onData, onEof } from './protocol.mjs';
import { FILENAME, LANGUAGES, state } from './state.mjs';
import { codeSteps, warmSteps, warmUp } from './warm.mjs';

const VERSION = JSON.parse(fs.readFileSync(new URL('./package.json', import.meta.url))).version;

// A guest started from a startup snapshot finds console.Console undefined: it is put back at main().
const ConsoleClass = console.Console;

function main() {
  takeLate();
  console.Console ??= ConsoleClass;
  const transport = process.env.TETHER_TRANSPORT || 'fd3';
  if (transport !== 'fd3' && transport !== 'stdio') { // R-STDIO-4
    process.stderr.write(`tether-node: transport ${JSON.stringify(transport)} is not supported (fd3, stdio)\n`);
    exit(2);
  }
  if (transport === 'stdio') {
    try {
      stdioChannel();
    } catch (err) {
      process.stderr.write(`tether-node: the stdio transport needs stdin and stdout that /proc can reopen: ${err.message}\n`);
      exit(2);
    }
  }
  const args = process.argv.slice(2);
  const cwd = args.indexOf('--cwd');
  if (cwd >= 0) process.chdir(args[cwd + 1]);
  // The program sees the argv of a script run with no arguments, the script
  // named as in its tracebacks: the guest's own script and options are not its.
  process.argv = [process.execPath, FILENAME];
  send(TYPES.HELLO, {
    protocol: PROTOCOL_VERSION,
    implementation: `tether-node/${VERSION} node/${process.versions.node}`,
    languages: LANGUAGES,
    capabilities: [],
  });
  const socket = new net.Socket({ fd: channel.read, readable: true, writable: false, onread: reads(onData) });
  socket.on('end', onEof);
  socket.on('error', onEof);
  channel.socket = socket;
  prepare();
  if (args.includes('--warm')) {
    state.warming = true;
    const steps = warmSteps({ typescript: args.includes('--typescript') });
    setImmediate(() => warmUp(steps));
  }
}

// Built into a startup snapshot (snapshot.mjs), the guest starts at main()
// when the snapshot is deserialized, its modules loaded and its own code
// compiled.
if (v8.startupSnapshot.isBuildingSnapshot()) {
  for (const step of codeSteps()) step();
  v8.startupSnapshot.setDeserializeMainFunction(main);
} else {
  main();
}
