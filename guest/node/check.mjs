// tether's pre-run check for JavaScript and TypeScript programs. The program
// is untrusted input, so this process is confined like a guest (host/check/processes.py
// starts it under the run's profile, with limits of its own) and reads no file
// but the compiler's library declarations and @types/node: a program that names
// any other path (`require("/etc/x.js")`, `typeof import("/home/...")`) finds
// nothing there, whether it exists or not. It is long-lived, so a check does
// not pay the compiler's start-up: it says {"ready": true} on fd 3, then reads
// one JSON request a line there,
//   {"id": 1, "language": "typescript", "declarations": "<.d.ts>", "source": "<program>"}
// and answers one JSON line,
//   {"id": 1, "diagnostics": [{"line": 2, "column": 7, "code": 2322, "message": "..."}], "rss": N}
// Lines and columns are the program's own, 1-based; a problem in the
// declarations themselves (a fault of the host's renderer, not of the program)
// comes with "in": "declarations" and the declarations' own line. "rss" is this
// process's resident memory, by which the host recycles it. The library files
// are parsed once and reused by every later check (they are all it caches).
import { createRequire } from 'node:module';
import path from 'node:path';
import net from 'node:net';
import readline from 'node:readline';

const require = createRequire(import.meta.url);
const ts = require('typescript');

const ROOT = '/__tether__';
const DECLARATIONS = `${ROOT}/bindings.d.ts`;
// The program becomes the body of an async function on its own lines, as in the
// guest: top-level await and return are legal and its lines keep their numbers.
// RUN's variables are parameters of a function around it, as in the guest
// (guest/node/main.mjs, compile), so the program's declarations may shadow them.
const PREFIX = 'async function __tether_program__() {\n';
const SUFFIX = '\n}\n';

/** The program as the checker reads it, with `names` in scope, of any type. */
function wrap(source, language, names) {
  if (names.length === 0) return PREFIX + source + SUFFIX;
  const typed = language === 'typescript' ? names.map((name) => `${name}: any`) : names;
  return `function __tether_scope__(${typed.join(', ')}) { return ${PREFIX}${source}\n} }\n`;
}

/**
 * The variables as the check declares them, or null when it cannot declare
 * them all as the guest has them: the guest puts in scope every name that
 * sloppy JavaScript allows as a parameter (`new Function(name, '')`), the
 * check reads strict code, where `package`, `let`, `eval` and the like are
 * reserved. Names no program can write (`default`, from a Python run) are
 * left out on both sides.
 */
function scopeNames(variables) {
  const names = [];
  for (const name of variables ?? []) {
    if (typeof name !== 'string' || !ts.isIdentifierText(name, ts.ScriptTarget.ES2022)) continue;
    const token = ts.stringToToken(name);
    const reserved = token !== undefined && token >= ts.SyntaxKind.FirstReservedWord
      && token <= ts.SyntaxKind.LastReservedWord;
    if (reserved) continue;
    const strictReserved = token !== undefined && token >= ts.SyntaxKind.FirstFutureReservedWord
      && token <= ts.SyntaxKind.LastFutureReservedWord;
    if (strictReserved || name === 'eval' || name === 'arguments') return null;
    names.push(name);
  }
  return names;
}

// In JavaScript only what checkJs knows for sure: unknown names, argument
// counts, and (from the declarations) wrong argument types; and TypeScript's
// own syntax (types, generics, enum: "can only be used in TypeScript files"),
// which the JavaScript guest cannot run.
const JAVASCRIPT_CODES = new Set([2304, 2552, 2554, 2555, 2556, 2345, 2339, 2551, 2349,
  8002, 8003, 8004, 8005, 8006, 8008, 8009, 8010, 8011, 8012, 8013, 8016, 8017]);
// Diagnostics that say nothing about the program's correctness as tether runs it.
// 7xxx: implicit any (a parameter without a type, say), which plain TypeScript
// allows: noImplicitAny is on only for what it infers besides (`const out = []`
// grows with its pushes, where without it the array would hold `never`).
const implicitAny = (code) => code >= 7000 && code < 8000;
const IGNORED = new Set([
  1375, // 'await' at the top level of a file needs a module: the program is a function body
  1378, // top-level await needs a target option: ditto
  2393, // duplicate function implementation: a program's own helpers named like a binding
  7044, 7043, 80001, 80002, 80004, 80005, 80006, 80007, // suggestions only
]);

const MAX_DIAGNOSTICS = 100; // the host keeps fewer; this bounds the answer's size
const MAX_MESSAGE = 2000; // characters of one message (a type written out may be huge)

const TYPE_ROOT = path.join(path.dirname(require.resolve('@types/node/package.json')), '..');
// The only directories whose files the compiler may read: its own library
// declarations and the @types it loads.
const READABLE = [path.dirname(require.resolve('typescript/lib/lib.d.ts')), TYPE_ROOT];

const OPTIONS = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
  typeRoots: [TYPE_ROOT],
  strict: true,
  noImplicitAny: true,
  useUnknownInCatchVariables: false,
  noEmit: true,
  skipLibCheck: true,
  allowJs: true,
  checkJs: true,
  noUnusedLocals: false,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  // The TypeScript guest strips types and transforms nothing: enum, namespace,
  // parameter properties and the like are refused there, so here too (TS1294).
  erasableSyntaxOnly: true,
  module: ts.ModuleKind.CommonJS,
};

/** Whether `name` is inside one of the READABLE directories (or is one). */
function readable(name) {
  const resolved = path.resolve(ROOT, name);
  return READABLE.some((dir) => resolved === dir || resolved.startsWith(`${dir}/`));
}

const cache = new Map(); // file name -> SourceFile: only READABLE files, so a bounded set
let previous; // the last program: what did not change is reused from it
const base = ts.createCompilerHost(OPTIONS, true);

function check({ language, declarations, source, variables }) {
  const names = scopeNames(variables);
  if (names === null) return null; // not checked: no false "unknown name"
  const programFile = `${ROOT}/program.${language === 'typescript' ? 'ts' : 'js'}`;
  const virtual = new Map([[DECLARATIONS, declarations], [programFile, wrap(source, language, names)]]);
  const host = {
    ...base,
    fileExists: (name) => virtual.has(name) || (readable(name) && base.fileExists(name)),
    readFile: (name) => virtual.get(name) ?? (readable(name) ? base.readFile(name) : undefined),
    directoryExists: (name) => name === ROOT || (readable(name) && base.directoryExists(name)),
    getDirectories: (name) => (readable(name) ? base.getDirectories(name) : []),
    realpath: (name) => (readable(name) ? base.realpath(name) : name),
    getSourceFile(name, languageVersion) {
      if (virtual.has(name)) return ts.createSourceFile(name, virtual.get(name), languageVersion, true);
      if (!readable(name)) return undefined;
      let file = cache.get(name);
      if (file === undefined) {
        file = base.getSourceFile(name, languageVersion);
        if (file !== undefined) cache.set(name, file);
      }
      return file;
    },
    getCurrentDirectory: () => ROOT,
  };
  const program = ts.createProgram([DECLARATIONS, programFile], OPTIONS, host, previous);
  previous = program;
  const diagnostics = [];
  for (const name of [DECLARATIONS, programFile]) {
    const file = program.getSourceFile(name);
    const found = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]
      .filter((d) => d.category === ts.DiagnosticCategory.Error);
    const made = language === 'typescript' ? new Map() : madeByAssignment(found, file);
    for (const d of found) {
      if (madeBefore(d, made)) continue;
      if (name === DECLARATIONS) {
        const { line, character } = file.getLineAndCharacterOfPosition(d.start ?? 0);
        diagnostics.push({
          in: 'declarations', line: line + 1, column: character + 1, code: d.code,
          message: ts.flattenDiagnosticMessageText(d.messageText, '\n').slice(0, MAX_MESSAGE),
        });
      } else {
        diagnostics.push(...programDiagnostic(d, language, source));
      }
    }
  }
  return diagnostics.slice(0, MAX_DIAGNOSTICS);
}

/**
 * Whether a wrong argument is a value written out in the call (a literal, an
 * operator's result, a function), which JavaScript knows for sure, rather than
 * a variable or a call whose type the compiler inferred (a string where a
 * union of strings is declared; JavaScript has no `as const` nor `!` to say more).
 */
function writtenOut(d) {
  const text = d.file && d.start !== undefined ? d.file.text.slice(d.start, d.start + (d.length ?? 0)) : '';
  return /^\s*(["'`\d[{(/+!~.-]|(true|false|null|undefined|new|function|class|async|typeof|void)\b)/.test(text);
}

// An unknown name or property that a JavaScript program assigns to: sloppy
// code makes a global (`count = 0`), and any object takes a property
// (`err.code = 'E_BAD'`). One it only reads is still refused.
const UNKNOWN_NAMES = new Set([2304, 2552, 2339, 2551]);

function assignedTo(d) {
  if (!d.file || d.start === undefined) return false;
  return /^\s*=(?!=)/.test(d.file.text.slice(d.start + (d.length ?? 0), d.start + (d.length ?? 0) + 80));
}

/**
 * The unknown name a diagnostic is about (`count`), or the property with the
 * name of its object (`err.code`), if it is about one.
 */
function unknownName(d) {
  if (!UNKNOWN_NAMES.has(d.code) || !d.file || d.start === undefined) return undefined;
  const { text } = d.file;
  const name = text.slice(d.start, d.start + (d.length ?? 0));
  if (d.code !== 2339 && d.code !== 2551) return name;
  const owner = /([\p{ID_Continue}$]+)\s*\.\s*$/u.exec(text.slice(Math.max(0, d.start - 200), d.start));
  return owner ? `${owner[1]}.${name}` : undefined;
}

/**
 * Where a JavaScript program makes each name and property by assigning to it
 * (the line after the assignment's): a read there or later is of what the
 * assignment made; one before, or in its own right-hand side, is not. Strict
 * code makes no global by assigning.
 */
function madeByAssignment(diagnostics, file) {
  const made = new Map();
  if (file === undefined || /^\s*\(?\s*(async\s*)?(function\b[^{]*)?\{?\s*['"]use strict['"]/.test(file.text)) {
    return made;
  }
  for (const d of diagnostics) {
    const name = unknownName(d);
    if (name === undefined || !assignedTo(d)) continue;
    const line = file.getLineAndCharacterOfPosition(d.start).line + 1;
    if (!made.has(name) || line < made.get(name)) made.set(name, line);
  }
  return made;
}

/** Whether a diagnostic is about a name read where an assignment has made it. */
function madeBefore(d, made) {
  const name = unknownName(d);
  if (name === undefined || !made.has(name)) return false;
  return assignedTo(d) || d.file.getLineAndCharacterOfPosition(d.start).line >= made.get(name);
}

function programDiagnostic(d, language, source) {
  if (IGNORED.has(d.code) || implicitAny(d.code)) return [];
  if (language !== 'typescript' && !JAVASCRIPT_CODES.has(d.code) && d.code >= 2000) return [];
  if (language !== 'typescript' && d.code === 2345 && !writtenOut(d)) return [];
  const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
  const line = where ? where.line : null; // line 0 is the prefix: the program's line 1 is 1
  return [{
    line: line === null || line < 1 ? null : Math.min(line, source.split('\n').length),
    column: where ? where.character + 1 : null,
    code: d.code,
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n').slice(0, MAX_MESSAGE),
  }];
}

// fd 3 is a socket the host holds the other end of, as a guest's channel is.
const channel = new net.Socket({ fd: 3, readable: true, writable: true });
const answer = (message) => channel.write(`${JSON.stringify({ ...message, rss: process.memoryUsage.rss() })}\n`);
const input = readline.createInterface({ input: channel, crlfDelay: Infinity });
input.on('line', (line) => {
  let request;
  try {
    request = JSON.parse(line);
    answer({ id: request.id, diagnostics: check(request) });
  } catch (err) {
    answer({ id: request?.id ?? null, error: String(err?.stack ?? err) });
  }
});
input.on('close', () => process.exit(0));
channel.on('error', () => process.exit(0));
answer({ ready: true });
