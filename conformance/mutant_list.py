"""The mutants: for every MUST and SHOULD, a change that breaks it in one of
our guests (or our host), and the cases that must then fail.

A mutant names the file it changes (relative to the repository), the text it
replaces (found exactly once) and what it puts there. ``guest`` says what
runs the cases: ``javascript`` (the Node guest, started by its command) or
``python`` (the CPython guest) for guest-mode scenarios, ``host`` for
host-mode scenarios. A case is a scenario's name, ``vectors`` (the copy's
Node codec over the codec vectors) or ``test:PATH::NAME`` (a test of the
suite, run in the copy). :data:`NOT_MUTATED` gives, for each MUST or SHOULD
without a mutant, the reason. The test suite checks that every change still
applies and that every requirement has a mutant or a reason; ``python -m
tether.conformance.mutants`` runs them (``make mutants``).
"""

from __future__ import annotations

from dataclasses import dataclass

NODE_MAIN = "guest/node/main.mjs"
NODE_CALLS = "guest/node/calls.mjs"
NODE_CHANNEL = "guest/node/channel.mjs"
NODE_CODEC = "guest/node/codec.mjs"
NODE_COMPILE = "guest/node/compile.mjs"
NODE_ERRORS = "guest/node/errors.mjs"
NODE_LIFECYCLE = "guest/node/lifecycle.mjs"
NODE_OUTPUT = "guest/node/output.mjs"
NODE_PROTOCOL = "guest/node/protocol.mjs"
NODE_RUN = "guest/node/run.mjs"
NODE_SCOPE = "guest/node/scope.mjs"
NODE_VALUES = "guest/node/values.mjs"
NODE_VARIABLES = "guest/node/variables.mjs"
PYTHON_SHIM = "guest/python/shim.py"


@dataclass(frozen=True)
class Mutant:
    name: str
    requirements: tuple[str, ...]
    what: str  # how the change breaks them
    guest: str  # "javascript" | "python" | "host": what the cases run against
    file: str
    old: str
    new: str
    cases: tuple[str, ...]
    transport: str = "fd3"  # for guest-mode cases


def _node(name: str, requirements: tuple[str, ...], what: str, old: str, new: str,
          *cases: str, file: str = NODE_MAIN, transport: str = "fd3") -> Mutant:
    return Mutant(name, requirements, what, "javascript", file, old, new, cases, transport)


def _python(name: str, requirements: tuple[str, ...], what: str, old: str, new: str,
            *cases: str, file: str = PYTHON_SHIM, transport: str = "fd3") -> Mutant:
    return Mutant(name, requirements, what, "python", file, old, new, cases, transport)


def _host(name: str, requirements: tuple[str, ...], what: str, old: str, new: str,
          *cases: str, file: str) -> Mutant:
    return Mutant(name, requirements, what, "host", file, old, new, cases)


MUTANTS: tuple[Mutant, ...] = (
    # -- §3 transport ------------------------------------------------------------
    _node("frames-on-stderr", ("R-TRANS-2",), "frames go to fd 2, not fd 3",
          "const channel = { read: CHANNEL_FD, write: CHANNEL_FD, socket: null };",
          "const channel = { read: CHANNEL_FD, write: 2, socket: null };", "hello",
          file=NODE_CHANNEL),
    _node("eof-inside-frame-ignored", ("R-TRANS-3",), "EOF inside a frame is not TRUNCATED",
          "    if (this.pending !== null || this.length > 0) {\n      throw new ProtocolError("
          "CODES.TRUNCATED", "    if (false) {\n      throw new ProtocolError(CODES.TRUNCATED",
          "truncated", file=NODE_CODEC),
    _node("eof-ignored", ("R-TRANS-4",), "the guest goes on waiting after the host's EOF",
          "  stop('the host closed the connection');", "  return;", "host-eof", file=NODE_PROTOCOL),
    _python("half-close-after-hello", ("R-TRANS-6",), "the guest shuts down its sending "
            "direction right after HELLO", "        loop = None\n        if warm:",
            "        __import__('socket').socket(fileno=os.dup(3)).shutdown(1)\n"
            "        loop = None\n        if warm:", "hello"),
    _host("eof-before-done-not-a-crash", ("R-TRANS-5",), "a guest that closes before DONE "
          "ends the run as cancelled, not crashed",
          'self._finish(crash("the guest closed its channel before finishing"))',
          'self._finish(cancelled("the guest closed its channel before finishing"))',
          "guest-eof-mid-run", file="host/run/session.py"),
    _node("stdio-fd1-left-alone", ("R-STDIO-1",), "over stdio, fd 1 stays the frame stream",
          "  fs.closeSync(1);\n  reopen(2, O_WRONLY | O_APPEND, 1);", "", "raw-stdout",
          transport="stdio", file=NODE_CHANNEL),
    _host("no-preamble-skipped", ("R-STDIO-2",), "no preamble is skipped",
          "MAX_PREAMBLE = 64 * 1024", "MAX_PREAMBLE = -1",
          "test:tests/host/test_launcher.py::test_a_preamble_before_hello_is_skipped_and_kept_"
          "as_raw_output", file="host/guests/remote.py"),
    _node("stdio-not-honoured", ("R-STDIO-4",), "TETHER_TRANSPORT=stdio is ignored",
          "  if (transport === 'stdio') {\n    try {", "  if (false) {\n    try {", "hello",
          transport="stdio"),
    _python("no-limits-over-stdio", ("R-STDIO-5",), "over stdio the guest does not set "
            "RUN's limits on itself", "            limit_self(run.limits)\n", "",
            "test:tests/guest/test_transport.py::test_over_stdio_the_python_guest_sets_runs_"
            "rlimits_itself"),
    _host("no-engine-kill", ("R-STDIO-6",), "the launcher's kill command is never run",
          "                await run_command(kill_argv, env)",
          "                return None",
          "test:tests/host/test_launcher.py::test_the_launchers_kill_runs_when_the_command_"
          "outlives_its_stream", file="host/guests/remote.py"),
    _python("no-watch-over-stdio", ("R-STDIO-7",), "over stdio the guest does not watch "
            "for its stream's end while the program computes",
            "            interrupt.watch_for_end(channel.read_fd)\n", "",
            "test:tests/host/test_launcher.py::test_a_program_that_computes_stops_when_its_"
            "stream_ends"),
    # -- §4 frames ------------------------------------------------------------------
    _node("frame-version-2", ("R-FRAME-1",), "the guest's frames say version 2",
          "  header[2] = VERSION;", "  header[2] = 2;", "hello", file=NODE_CODEC),
    _node("magic-unchecked", ("R-FRAME-2",), "bad magic is not FRAME_MALFORMED",
          "  if (header[0] !== MAGIC[0] || header[1] !== MAGIC[1]) {", "  if (false) {",
          "bad-magic", file=NODE_CODEC),
    _node("version-unchecked", ("R-FRAME-3",), "a frame of version 2 is read",
          "  if (header[2] !== VERSION) {", "  if (false) {", "frame-version", file=NODE_CODEC),
    _node("flags-unchecked", ("R-FRAME-4",), "reserved flags are not checked",
          "  if (DataViewPrototypeGetUint16(view, 4) !== 0) {", "  if (false) {", "frame-flags",
          file=NODE_CODEC),
    _node("length-unchecked", ("R-FRAME-5",), "a declared length past the ceiling is waited "
          "for", "  if (length > maxFrameBytes) {", "  if (false) {", "frame-too-large",
          file=NODE_CODEC),
    _node("schema-after-state", ("R-ORDER-1",), "the state is checked before the schema",
          "      onMessage(decodeMessage(frame,",
          "      if (frame.type === TYPES.RESULT && state.phase === 'AWAIT_RUN') {\n"
          "        throw new ProtocolError(CODES.UNEXPECTED_MESSAGE, 'RESULT before RUN');\n"
          "      }\n      onMessage(decodeMessage(frame,", "check-order", file=NODE_PROTOCOL),
    _node("reserved-type-read", ("R-FRAME-6",), "a reserved frame type is not UNKNOWN_TYPE",
          "  if (type < 0x80 && !(type in TYPE_NAMES)) {", "  if (false) {", "unknown-type",
          file=NODE_CODEC),
    _node("extension-read", ("R-FRAME-7",), "an extension frame is decoded, not discarded",
          "      if (frame.type >= 0x80) continue; // no extension negotiated (R-FRAME-7)",
          "", "extension-mid-run", file=NODE_PROTOCOL),
    # -- §5 payloads ----------------------------------------------------------------
    _node("trailing-bytes-read", ("R-CBOR-1",), "bytes after the item are ignored",
          "  if (reader.pos !== payload.length) reader.fail('bytes after the item');", "",
          "malformed-payload", file=NODE_CODEC),
    _node("not-shortest-read", ("R-CBOR-2",), "a head that is not in its shortest form is "
          "read", "    if (value < least) this.fail(`${value} not in its shortest form`);", "",
          "payload-not-shortest", file=NODE_CODEC),
    _node("not-shortest-sent", ("R-CBOR-2",), "small integers are sent in two bytes",
          "  if (v < 24) {\n    w.byte(m | v);", "  if (v < 0) {\n    w.byte(m | v);", "hello",
          file=NODE_CODEC),
    _node("map-order-lost", ("R-CBOR-2", "R-MAP-3"), "a decoded map's keys are sorted",
          "    const keys = mapKeys(value);", "    const keys = mapKeys(value).sort();",
          "value-model", file=NODE_VALUES),
    _node("nan-payload-read", ("R-CBOR-3",), "a NaN with a payload is read",
          "          this.fail('NaN not encoded as f97e00');", "", "payload-nan-payload",
          file=NODE_CODEC),
    _node("small-bignum-read", ("R-CBOR-3",), "a bignum that fits 64 bits is read",
          "    if (magnitude <= MAX_UINT64) this.fail('bignum fits in 64 bits');", "",
          "payload-bignum-small", file=NODE_CODEC),
    _node("duplicate-key-read", ("R-CBOR-4",), "a repeated map key is read",
          "      if (MapPrototypeHas(out, key)) this.fail(`key \"${key}\" repeated`);", "",
          "payload-duplicate-key", file=NODE_CODEC),
    _node("any-tag-read", ("R-CBOR-5",), "any tag is read, its content kept",
          "    if (tag !== 2 && tag !== 3) return this.fail(`tag ${tag} is not allowed`);",
          "    if (tag !== 2 && tag !== 3) return this.item(1);", "payload-tag",
          file=NODE_CODEC),
    _node("undefined-read", ("R-CBOR-6",), "the simple value undefined is read as null",
          "      case 23: return this.fail('undefined is not allowed');",
          "      case 23: return null;", "payload-undefined", file=NODE_CODEC),
    _node("invalid-text-read", ("R-CBOR-7",), "invalid UTF-8 is read with U+FFFD",
          "const TEXT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });",
          "const TEXT = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });",
          "payload-invalid-text", file=NODE_CODEC),
    _node("depth-unbounded", ("R-CBOR-8", "R-RUN-4"), "arrays are read at any depth",
          "      case 4: {\n        if (depthLeft <= 0) this.fail('nested too deeply');",
          "      case 4: {", "depth-after-run", file=NODE_CODEC),
    _node("payload-errors-invalid-message", ("R-CBOR-9",), "a payload that breaks §5 is "
          "INVALID_MESSAGE", "    throw new ProtocolError(CODES.MALFORMED_PAYLOAD, "
          "`$${path}: ${problem}`);", "    throw new ProtocolError(CODES.INVALID_MESSAGE, "
          "`$${path}: ${problem}`);", "payload-duplicate-key", file=NODE_CODEC),
    _node("items-unbounded", ("R-CBOR-11",), "a payload of any number of items is read",
          "  if (payload.length > maxItems && countItems(payload, maxItems) > maxItems) {",
          "  if (false) {", "too-many-items", "vectors", file=NODE_CODEC),
    # -- §6 values ------------------------------------------------------------------
    _node("deep-values-sent", ("R-VAL-1",), "a value one level past max_depth is sent",
          "  if (depthLeft <= 0) throw new Problem('nested too deeply');",
          "  if (depthLeft < 0) throw new Problem('nested too deeply');", "value-depth",
          file=NODE_VALUES),
    _node("many-items-returned", ("R-VAL-1",), "a return value over value_items is sent",
          "  } else if (excess !== null) {\n    problem = `return value holds",
          "  } else if (false) {\n    problem = `return value holds", "return-too-many-items",
          file=NODE_LIFECYCLE),
    _node("lone-surrogate-replaced", ("R-VAL-2", "R-CBOR-7"), "text with a lone surrogate "
          "is sent with U+FFFD", "      if (!StringPrototypeIsWellFormed(value)) throw new "
          "Problem('text is not valid Unicode (a lone surrogate)');", "", "return-lone-surrogate",
          file=NODE_VALUES),
    _node("return-error-without-path", ("R-VAL-2",), "a returned value outside the model is "
          "reported without its path", "message: `return value ${err.message}`",
          "message: `return value: ${err.message.split(': ').pop()}`", "return-outside-model",
          file=NODE_LIFECYCLE),
    _node("paths-from-one", ("R-VAL-3",), "array indexes in paths count from 1",
          "    if (typeof key === 'number') return `[${key}]`;",
          "    if (typeof key === 'number') return `[${key + 1}]`;", "return-outside-model",
          file=NODE_VALUES),
    _node("trailing-undefined-sent", ("R-JS-1",), "trailing undefined arguments are sent as "
          "null", "  while (count > 0 && programArgs[count - 1] === undefined) count -= 1;\n",
          "", "call-trailing-undefined", file=NODE_CALLS),
    _node("bytes-are-views", ("R-JS-2",), "a decoded Uint8Array is a view of its frame",
          "        return new Uint8ArrayCtor(TypedArrayPrototypeSubarray(this.bytes, this.pos - n, "
          "this.pos));", "        return TypedArrayPrototypeSubarray(this.bytes, this.pos - n, "
          "this.pos);", "bytes-own-their-buffer",
          file=NODE_CODEC),
    _python("integral-floats-as-integers", ("R-MAP-2",), "an integral float is sent as an "
            "integer", "            value = _run_to_end(guest, code, namespace, as_script=last)\n",
            "            value = _run_to_end(guest, code, namespace, as_script=last)\n"
            "            if isinstance(value, list):\n"
            "                value = [int(v) if isinstance(v, float) and v.is_integer() else v "
            "for v in value]\n", "integral-float"),
    _node("empty-array-as-map", ("R-MAP-3",), "an empty array decodes to an empty map",
          "    return out;\n  }\n  if (value instanceof MapCtor) {",
          "    return value.length ? out : {};\n  }\n  if (value instanceof MapCtor) {",
          "value-model", file=NODE_VALUES),
    _node("nulls-dropped", ("R-MAP-4",), "nulls in a decoded array are dropped",
          "    for (let i = 0; i < value.length; i++) out[i] = fromWire(value[i]);",
          "    for (let i = 0; i < value.length; i++) {\n"
          "      if (value[i] !== null) out.push(fromWire(value[i]));\n    }",
          "value-model", file=NODE_VALUES),
    _node("bignums-as-floats", ("R-MAP-5",), "a bignum decodes to a float",
          "    return tag === 2 ? magnitude : -1n - magnitude;",
          "    return Number(tag === 2 ? magnitude : -1n - magnitude);", "value-model",
          file=NODE_CODEC),
    _node("traceback-as-bytes", ("R-MAP-6",), "an error's traceback is sent as bytes",
          "    traceback: StringPrototypeToWellFormed(StringCtor(error.traceback)),",
          "    traceback: Buffer.from(StringCtor(error.traceback)),", "program-error",
          file=NODE_ERRORS),
    _python("keywords-as-positional", ("R-MAP-7", "R-CALL-1"), "keyword arguments are sent "
            "in args", "    return wire_args, wire_kwargs\n",
            "    return wire_args + list(wire_kwargs.values()), {}\n", "keyword-arguments",
            file="guest/python/drivers.py"),
    # -- §7.1, §7.2 HELLO and RUN -------------------------------------------------------
    _node("output-before-hello", ("R-HELLO-1",), "the guest sends OUTPUT before HELLO",
          "  send(TYPES.HELLO, {",
          "  send(TYPES.OUTPUT, { stream: 'stdout', text: 'ready' });\n  send(TYPES.HELLO, {",
          "hello"),
    _host("hello-protocol-unchecked", ("R-HELLO-2",), "a HELLO of protocol 2 is accepted",
          "        if isinstance(message, Hello) and message.protocol != PROTOCOL_VERSION:",
          "        if False:", "guest-hello-version", file="codec/connection.py"),
    _node("capabilities-offered", ("R-HELLO-3",), "HELLO offers a capability",
          "    capabilities: [],", "    capabilities: ['example.feature'],", "hello"),
    _node("any-language-run", ("R-RUN-1",), "a RUN in a language the guest did not offer "
          "is run", "  if (!LANGUAGES.includes(run.language)) {", "  if (false) {",
          "language-unsupported", file=NODE_RUN),
    _host("any-language-sent", ("R-RUN-1",), "the host sends RUN to a guest without the "
          "language", "        if self.language not in hello.languages:",
          "        if False:", "guest-wrong-language", file="host/run/session.py"),
    _node("return-value-lost", ("R-RUN-2",), "what the program returns is not its value",
          "      finishWithValue(state.returned?.value ?? null);",
          "      finishWithValue(null);", "hello", file=NODE_LIFECYCLE),
    _node("last-expression-always", ("R-RUN-7",), "a program that falls off its end returns "
          "its last expression", "{ capture, lastExpression: run.last_expression,",
          "{ capture, lastExpression: true,", "return-nothing", file=NODE_RUN),
    _node("repeated-bindings-read", ("R-RUN-3",), "a RUN that repeats a binding is run",
          "    if (new Set(bindings.map((b) => b.name)).size !== bindings.length) {",
          "    if (false) {", "run-bindings-repeated", file=NODE_CODEC),
    _node("guest-names-win", ("R-RUN-6",), "a binding named like a guest's name is left out",
          "  for (const binding of run.bindings) scope.set(binding.name, makeBinding(binding));",
          "  for (const binding of run.bindings) {\n"
          "    if (!scope.has(binding.name)) scope.set(binding.name, makeBinding(binding));\n"
          "  }", "binding-shadows-guest-name", file=NODE_RUN),
    _node("ceiling-not-switched", ("R-RUN-4", "R-LIMIT-2"), "after RUN the ceiling stays "
          "the default", "  state.decoder.maxFrameBytes = run.limits.frame_bytes;\n", "",
          "ceiling-after-run", file=NODE_RUN),
    _node("second-run-read", ("R-STATE-1", "R-RUN-5"), "a second RUN starts a second program",
          "  if (nextState(state.phase, 'host', name) === undefined) {",
          "  if (nextState(state.phase, 'host', name) === undefined && name !== 'RUN') {",
          "second-run", file=NODE_PROTOCOL),
    _node("second-cancel-read", ("R-STATE-1",), "a CANCEL while cancelling is ignored",
          "  if (nextState(state.phase, 'host', name) === undefined) {",
          "  if (nextState(state.phase, 'host', name) === undefined && name !== 'CANCEL') {",
          "second-cancel", file=NODE_PROTOCOL),
    _python("second-loop-unread", ("R-RUN-8",), "binding calls awaited on a second loop the "
            "program starts are never read: fd 3 stays with the first loop that read it",
            "        if loop is self._reading:\n            return\n",
            "        if self._reading is not None:\n            return\n",
            "test:tests/host/test_python_programs.py::test_every_way_to_start_a_loop_reads_"
            "binding_calls", file="guest/python/aio.py"),
    _python("guest-argv-seen", ("R-RUN-9",), "the program sees the guest's sys.argv, not a "
            "script's", "    sys.argv = [FILENAME]\n", "",
            "test:tests/host/test_python_programs.py::test_the_program_is_named_as_a_script",
            file="guest/python/script.py"),
    _node("static-imports-empty", ("R-JS-3",), "a static import of a built-in module binds "
          "none of its names", "    namespace = await load(url);", "    namespace = {};",
          "js-static-imports", file=NODE_SCOPE),
    _node("changed-built-in-used", ("R-JS-4",), "the guest encodes a map with the "
          "Map.prototype.get the program left",
          "      writeWire(isMap ? MapPrototypeGet(value, keys[i]) : value[keys[i]], w);",
          "      writeWire(isMap ? value.get(keys[i]) : value[keys[i]], w);",
          "js-changed-built-ins", file=NODE_CODEC),
    # -- §7.3..7.5 CALL, RESULT, OUTPUT ---------------------------------------------------
    _node("call-ids-repeat", ("R-CALL-2",), "every CALL has id 1",
          "  const id = ++state.lastCallId;", "  const id = state.lastCallId + 1;",
          "sequential-calls", file=NODE_CALLS),
    _host("call-ids-unchecked", ("R-CALL-2",), "a CALL id that does not increase is accepted",
          "            if message.id <= self._last_call_id:",
          "            if False:", "guest-call-id-reused", file="codec/connection.py"),
    _node("calls-not-queued", ("R-CALL-3",), "calls past max_calls_in_flight are sent",
          "  while (state.inFlight.size >= maxCalls && isRunning()) {", "  while (false) {",
          "call-queue", file=NODE_CALLS),
    _host("too-many-calls-served", ("R-CALL-3",), "the host serves calls past "
          "max_calls_in_flight",
          "        if len(self._conn.calls_in_flight) > limits.max_calls_in_flight:",
          "        if False:", "guest-too-many-calls", file="host/run/serving.py"),
    _node("large-arguments-sent", ("R-CALL-4",), "arguments over value_bytes are sent",
          "  const excess = valueExcess(args.bytes, maxBytes, -2, -2);",
          "  const excess = null;", "arguments-too-large", file=NODE_CALLS),
    _host("large-arguments-served", ("R-CALL-4",), "the host serves arguments over "
          "value_bytes",
          "        if (self._conn.last_payload_size > limits.value_bytes  # else it surely fits",
          "        if (False  # else it surely fits", "guest-call-too-large",
          file="host/run/serving.py"),
    _host("unknown-binding-wrong-code", ("R-CALL-5",), "an unknown binding is answered with "
          "BINDING_ERROR", '            return CallError(ErrorCode.UNKNOWN_BINDING, "NameError",',
          '            return CallError(ErrorCode.BINDING_ERROR, "NameError",',
          "guest-unknown-binding", file="host/run/serving.py"),
    _host("calls-answered-in-turn", ("R-CALL-6",), "the host cancels a call when another "
          "comes", "        if not task.done():\n            self._in_flight[call.id] = task",
          "        for older in self._in_flight.values():\n            older.cancel()\n"
          "        if not task.done():\n            self._in_flight[call.id] = task",
          "concurrent-calls",
          "test:tests/host/test_binding_outcomes.py::test_sync_bindings_run_at_most_binding_"
          "threads_at_once", file="host/run/serving.py"),
    _node("unknown-result-ignored", ("R-RESULT-1",), "a RESULT for no call is ignored",
          "    if (call === undefined) {\n      throw new ProtocolError(CODES.INVALID_CALL_ID,",
          "    if (call === undefined) return;\n    if (false) {\n"
          "      throw new ProtocolError(CODES.INVALID_CALL_ID,", "unknown-call-id",
          file=NODE_PROTOCOL),
    _node("result-error-swallowed", ("R-RESULT-2",), "a call error returns null",
          "  if (result.error) throw fromProgram(new BindingError(name, result.error), call);",
          "  if (result.error) return null;", "binding-error-caught", file=NODE_CALLS),
    _host("host-traceback-sent", ("R-RESULT-3",), "the host puts its traceback in a binding "
          "error's message",
          "    error = CallError(ErrorCode.BINDING_ERROR, type(exc).__name__, str(exc))",
          "    error = CallError(ErrorCode.BINDING_ERROR, type(exc).__name__, str(exc) + "
          "''.join(__import__('traceback').format_tb(exc.__traceback__)))",
          "binding-error-caught", file="host/run/serving.py"),
    _host("binding-error-unfitted", ("R-RESULT-6",), "a binding's error is sent as raised, "
          "however long and whatever text it holds",
          "            result = Result(id=result.id, error=result.error.fitted("
          "self._limits.value_bytes))",
          "            pass",
          "test:tests/host/test_binding_outcomes.py::test_an_error_too_large_for_a_frame_is_cut_"
          "to_fit",
          "test:tests/host/test_binding_outcomes.py::test_an_error_that_is_not_valid_text_is_"
          "repaired", file="host/run/serving.py"),
    _host("invalid-result-sent", ("R-RESULT-4",), "a result outside the model is answered "
          "as a binding error",
          "            ErrorCode.INVALID_VALUE, \"InvalidValue\",\n            f\"{call.name}() "
          "returned a value outside the value model: {exc}\")), None",
          "            ErrorCode.BINDING_ERROR, \"InvalidValue\",\n            f\"{call.name}() "
          "returned a value outside the value model: {exc}\")), None",
          "result-outside-model", file="host/run/serving.py"),
    _node("binding-field-missing", ("R-RESULT-5",), "BindingError.binding is not set",
          "    this.binding = binding;", "    this.binding = null;", "binding-error-caught",
          file=NODE_ERRORS),
    _python("output-after-call", ("R-OUTPUT-1",), "buffered output is not sent before a CALL",
            "        self._next_id += 1\n        self.output.flush()\n",
            "        self._next_id += 1\n", "output-before-call",
            file="guest/python/drivers.py"),
    _node("output-unsplit", ("R-OUTPUT-2", "R-LIMIT-3", "R-LANG-7"), "output is sent in one "
          "frame whatever its size", "const OUTPUT_CHUNK = 16 * 1024;",
          "const OUTPUT_CHUNK = 1024 * 1024;", "output-split", file=NODE_OUTPUT),
    _node("bytes-as-latin1", ("R-OUTPUT-4",), "bytes written are decoded as Latin-1",
          "    const decoder = new StringDecoder('utf8');",
          "    const decoder = new StringDecoder('latin1');", "output-invalid-text",
          file=NODE_OUTPUT),
    _host("output-uncapped", ("R-OUTPUT-3",), "the host keeps all output",
          "        while self._tail_bytes > self._tail_limit:",
          "        while False:", "guest-output-cap", file="host/run/output.py"),
    _python("raw-output-late", ("R-OUTPUT-5",), "what the program wrote to fd 1 goes out only "
            "at a CALL or DONE, after the text it printed after it",
            "        if self.raw is not None:  # written below print before this text was\n",
            "        if self.raw is not None and final:\n", "raw-output",
            file="guest/python/channel.py"),
    # -- §7.6 DONE ------------------------------------------------------------------------
    _node("done-twice", ("R-DONE-1",), "DONE is sent twice",
          "  for (let i = 0; i < parts.length; i++) writeAll(parts[i]);",
          "  for (let i = 0; i < 2 * parts.length; i++) writeAll(parts[i % parts.length]);",
          "hello", file=NODE_LIFECYCLE),
    _node("line-dropped", ("R-DONE-2", "R-LANG-3"), "DONE's error never has a line",
          "  if (line !== undefined) error.line = line;\n  return error;",
          "  return error;", "program-error", file=NODE_ERRORS),
    _node("line-of-returned-value", ("R-LANG-3",), "an error in the returned value gets a "
          "line", "finish({ error: { type: 'TypeError', message: `return value ${err.message}`, "
          "traceback: '' } });", "finish({ error: { type: 'TypeError', message: `return value "
          "${err.message}`, traceback: '', line: 1 } });", "return-outside-model",
          file=NODE_LIFECYCLE),
    _node("thrown-value-typed", ("R-DONE-6", "R-LANG-2"), "a thrown string's type is its "
          "typeof", "    return { type: 'Error', message: `uncaught ${typeof err}: "
          "${shown(err)}`, traceback: '' };", "    return { type: typeof err, message: "
          "`uncaught ${typeof err}: ${shown(err)}`, traceback: '' };", "throw-a-value",
          file=NODE_ERRORS),
    _node("own-error-type", ("R-LANG-2",), "a returned value outside the model is a "
          "ValueModelError", "finish({ error: { type: 'TypeError', message: `return value",
          "finish({ error: { type: 'ValueModelError', message: `return value",
          "return-outside-model", file=NODE_LIFECYCLE),
    _node("type-uncut", ("R-DONE-7",), "an error type over 256 bytes is sent whole",
          "type: cut(StringPrototypeToWellFormed(StringCtor(error.type)), MAX_ERROR_TYPE_BYTES),",
          "type: StringPrototypeToWellFormed(StringCtor(error.type)),", "error-type-too-long",
          file=NODE_ERRORS),
    _node("error-unfitted", ("R-DONE-7", "R-LIMIT-3"), "a DONE error is sent whatever its "
          "size", "  if (size(fixed) <= budget) return fixed;", "  return fixed;",
          "error-too-large", file=NODE_ERRORS),
    _node("exit-exits", ("R-DONE-8",), "the program's process.exit ends the guest",
          "  process.exit = programExit;\n", "", "exit-zero", file=NODE_RUN),
    _node("calls-not-waited", ("R-DONE-9", "R-LANG-12"), "DONE does not wait for calls in "
          "flight: once the program returns, they no longer hold the event loop",
          "    .then((value) => { state.returned = { value }; },",
          "    .then((value) => {\n      state.returned = { value };\n"
          "      state.inFlight.clear();\n      state.waiting.length = 0;\n"
          "      holdLoopForCalls();\n    },",
          "end-waits", "end-waits-calls", file=NODE_RUN),
    _python("threads-not-joined", ("R-DONE-9", "R-LANG-12"), "DONE does not wait for the "
            "program's threads", "            _wait_for_threads()\n", "            pass\n",
            "end-waits", "end-waits-threads"),
    _node("frames-after-done", ("R-DONE-4", "R-STATE-4"), "the guest reads on after DONE",
          "  exit(0); // R-DONE-4: nothing of the program outlives DONE", "", "late-frames",
          file=NODE_LIFECYCLE),
    _node("cancelled-misnamed", ("R-DONE-5",), "a cancelled program's DONE is not "
          "Cancelled", "    this.name = 'Cancelled';", "    this.name = 'Stopped';", "cancel",
          file=NODE_ERRORS),
    # -- §7.7, §7.8 CANCEL and ERROR --------------------------------------------------------
    _node("cancel-ignored", ("R-CANCEL-1",), "CANCEL does not stop the program",
          "    if (state.phase === 'RUNNING') cancel(body.reason); // else late (R-STATE-4)",
          "    if (false) cancel(body.reason);", "cancel", file=NODE_PROTOCOL),
    _node("calls-not-cancelled", ("R-CANCEL-2",), "CANCEL does not reach the calls in "
          "flight", "    entry[1].resolve({ cancelled: reason });\n", "", "cancel-wind-down",
          file=NODE_LIFECYCLE),
    _node("queued-calls-sent", ("R-CANCEL-2", "R-LANG-13"), "a queued call is sent after "
          "CANCEL", "  if (queued && state.phase === 'CANCELLING') throw fromProgram(new "
          "Cancelled(state.cancelReason), call);\n", "", "cancel-queued", file=NODE_CALLS),
    _python("computing-not-watched", ("R-CANCEL-3",), "the guest does not watch fd 3 while "
            "the program computes", "        interrupt.arm(channel.read_fd)\n", "",
            "test:tests/host/test_where_it_stopped.py::test_a_busy_loop_is_stopped_where_it_"
            "spins"),
    _python("cleanup-interrupted", ("R-CANCEL-3",), "the SIGTERM after a cancellation "
            "raised where the program waits interrupts its cleanup",
            "        if waiting:\n            interrupt.delivered(raised=\"asyncio.exceptions."
            "CancelledError\")\n", "",
            "test:tests/guest/test_transport.py::test_a_sigterm_after_a_delivered_cancel_leaves_"
            "the_cleanup_alone", file="guest/python/aio.py"),
    _host("last-words-unheard", ("R-CANCEL-4",), "after CANCEL the host stops reading",
          "        listen = ending.status in _HOST_ENDED and",
          "        listen = False and ending.status in _HOST_ENDED and",
          "test:tests/host/test_where_it_stopped.py::test_a_cancelled_run_says_where_it_was",
          file="host/run/session.py"),
    _node("no-error-sent", ("R-ERR-1",), "the guest closes without ERROR",
          "    send(TYPES.ERROR, { code: err.code ?? CODES.INTERNAL_ERROR, message: "
          "StringCtor(err.detail ?? err.message) });", "", "bad-magic", file=NODE_CHANNEL),
    _host("host-sends-no-error", ("R-ERR-1",), "the host closes without ERROR",
          "        self._send(Error(exc.code, exc.message))  # R-ERR-1\n",
          "", "guest-garbage", file="host/run/session.py"),
    _node("error-answered", ("R-ERR-2",), "the guest goes on after the host's ERROR",
          "    exit(1); // R-ERR-2", "    stop('the host reported an error'); // R-ERR-2",
          "host-error", file=NODE_PROTOCOL),
    _host("guest-error-ignored", ("R-ERR-2",), "the host goes on after the guest's ERROR",
          "            self._finish(protocol_error(f\"the guest reported "
          "{event.code.name}: \"", "            (lambda _: None)((f\"the guest reported "
          "{event.code.name}: \"", "guest-error-mid-run", file="host/run/session.py"),
    # -- §7.9 variables -----------------------------------------------------------------------
    _node("private-variables-read", ("R-VARS-1",), "a RUN with a private variable name is "
          "run", "      if (problem) throw invalid(`RUN.variables: ", "      if (false) throw "
          "invalid(`RUN.variables: ", "run-variable-name", file=NODE_CODEC),
    _node("variables-not-in-scope", ("R-VARS-2", "R-LANG-8"), "RUN's variables are not in "
          "the program's scope",
          "  for (const [name, value] of variables) scope.set(name, fromWire(value));\n", "",
          "variables", file=NODE_RUN),
    _node("variables-lost-at-syntax-error", ("R-VARS-3",), "a program that does not compile "
          "sends no variables", "    finish({ error: describe(err, true) });\n    return;",
          "    state.run = { ...run, variables: undefined };\n"
          "    finish({ error: describe(err, true) });\n    return;", "variables-syntax-error",
          file=NODE_RUN),
    _node("private-names-kept", ("R-VARS-4",), "names starting with _ are sent",
          " || StringPrototypeStartsWith(name, '_') || isModule(value)) continue;",
          " || isModule(value)) continue;", "variables", file=NODE_VARIABLES),
    _node("functions-kept", ("R-VARS-4", "R-LANG-8"), "functions are not left out",
          "    if (value === undefined || typeof value === 'function' || ",
          "    if (value === undefined || ", "variables", file=NODE_VARIABLES),
    _node("variables-unbounded", ("R-VARS-5",), "variables are sent whatever their size",
          "  let budget = MathMin(variablesBytes, frameBytes - 1024 - size);",
          "  let budget = frameBytes - 1024 - size;", "variables", file=NODE_VARIABLES),
    _host("forged-variables-kept", ("R-VARS-6",), "the host keeps variables whose names "
          "break R-VARS-1",
          "    if variables_problem is not None:\n        return broken_protocol(",
          "    if False:\n        return broken_protocol(", "guest-forged-variables",
          file="host/run/endings.py"),
    _node("last-expression-ignored", ("R-VARS-7",), "last_expression is ignored",
          "{ capture, lastExpression: run.last_expression,",
          "{ capture, lastExpression: false,", "last-expression", file=NODE_RUN),
    # -- §8, §9, §10 -------------------------------------------------------------------------------
    _host("calls-refused-late", ("R-STATE-3",), "a CALL after CANCEL is answered with "
          "BINDING_ERROR", "                ErrorCode.CANCELLED, "
          "\"Cancelled\", \"the run is ending\")))", "                ErrorCode.BINDING_ERROR, "
          "\"Cancelled\", \"the run is ending\")))",
          "guest-call-while-cancelling", file="host/run/last_words.py"),
    _node("any-error-code-read", ("R-ERRCODE-1",), "a call error of a connection code is "
          "raised to the program", "  if (!known) throw invalid(", "  if (false) throw invalid(",
          "result-error-code", file=NODE_CODEC),
    _node("ceiling-unbounded-before-run", ("R-LIMIT-2",), "before RUN any length is waited "
          "for", "  constructor(maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {",
          "  constructor(maxFrameBytes = 2 ** 32) {", "frame-too-large", file=NODE_CODEC),
    # -- §12 termination ---------------------------------------------------------------------------
    _host("cancelled-reported-ok", ("R-TERM-1",), "a guest that closes early is reported ok",
          '    return Ending(Status.CRASHED, RunError("GuestCrashed", '
          'message))', '    return Ending(Status.OK, RunError("GuestCrashed", message))',
          "guest-eof-mid-run", file="host/run/endings.py"),
    _host("calls-left-running", ("R-TERM-3",), "the host leaves calls running at the end",
          "        for task in calls:\n            task.cancel()",
          "        for task in calls:\n            pass",
          "test:tests/host/test_endings.py::test_timeout_with_calls_in_flight_cancels_them",
          file="host/run/serving.py"),
    # -- §15 languages ------------------------------------------------------------------
    _node("source-as-latin1", ("R-LANG-1",), "the source is compiled as Latin-1",
          "  let code = `${prefix}${modular?.source ?? source}\\n}; })`;",
          "  let code = `${prefix}${Buffer.from(modular?.source ?? source).toString('latin1')}"
          "\\n}; })`;", "output-unicode", file=NODE_COMPILE),
    _node("syntax-line-off", ("R-LANG-4",), "a syntax error is reported a line down",
          "    if (where) line = NumberCtor(where[1]);",
          "    if (where) line = NumberCtor(where[1]) + 1;", "syntax-error", file=NODE_ERRORS),
    _node("negative-zero-integer", ("R-LANG-5",), "-0 is sent as the integer 0",
          "  if (NumberIsSafeInteger(v) && !ObjectIs(v, -0)) {",
          "  if (NumberIsSafeInteger(v)) {", "numbers", file=NODE_CODEC),
    _node("text-printed-as-latin1", ("R-LANG-6",), "printed text is written as Latin-1 "
          "bytes", "          ? BufferFrom(chunk, encoding) : null;",
          "          ? BufferFrom(chunk, encoding) : BufferFrom(chunk, 'latin1');",
          "output-unicode", file=NODE_OUTPUT),
    _python("built-in-names-kept", ("R-LANG-9",), "a binding named like a built-in is left "
            "out", "        bindings = {b.name: describe_binding(guest.make_binding(b.name), b)"
            "\n                    for b in run.bindings}",
            "        bindings = {b.name: describe_binding(guest.make_binding(b.name), b)"
            "\n                    for b in run.bindings if not hasattr(builtins, b.name)}",
            "binding-shadows-built-in"),
    _node("calls-one-at-a-time", ("R-LANG-14",), "calls made together are sent one at a "
          "time", "  while (state.inFlight.size >= maxCalls && isRunning()) {",
          "  while (state.inFlight.size >= 1 && isRunning()) {", "concurrent-calls",
          file=NODE_CALLS),
    _node("arguments-filled-in", ("R-LANG-15",), "arguments the program left out are sent "
          "as null", "  const wireArgs = ArrayPrototypeMap(ArrayPrototypeSlice(programArgs, 0, "
          "count), (arg, i) => {", "  const padded = Math.max(count, positional ?? 0);\n"
          "  const wireArgs = ArrayPrototypeMap(Array.from({ length: padded }, "
          "(_, i) => programArgs[i] ?? null), (arg, i) => {", "call-default-argument",
          file=NODE_CALLS),
)

#: Every MUST and SHOULD without a mutant, and why.
NOT_MUTATED: dict[str, str] = {
    "R-MAP-1": "a rule for languages whose strings are bytes or carry an encoding; ours "
               "have strings of characters",
    "R-PRELUDE-1": "a rule for languages without await; ours have it",
    "R-PRELUDE-2": "a rule for languages without await; ours have it",
    "R-TERM-2": "the host's SIGTERM, grace and SIGKILL to the group: the run's cgroup kills "
                "what a group kill misses, and the tests that see the grace "
                "(tests/host/test_where_it_stopped.py) depend on timing under load",
    "R-TERM-4": "the host's pidfd watch: breaking it makes a run hang until its timeout, "
                "which no test waits for (tests/host/test_endings.py times a descendant that "
                "keeps the pipes open)",
}
