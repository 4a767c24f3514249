// The program made a function (R-RUN-2, R-RUN-6): its wrapper, TypeScript's
// types stripped, its module syntax read (imports.mjs), its top-level names
// found (toplevel.mjs); and the columns an error shows, taken back to the
// program's own.

import { createRequire } from 'node:module';
import vm from 'node:vm';
import { mayHaveModuleSyntax, moduleSyntax } from './imports.mjs';
import { RegExpPrototypeExec, StringPrototypeSlice } from './primordials.mjs';
import { FILENAME, state } from './state.mjs';
import { topLevel } from './toplevel.mjs';

export const REGISTER = '__tether_register__';
const CAPTURE = '__tether_capture__';
export const IMPORT = '__tether_import__';
export const META = '__tether_meta__';

/**
 * What compile() put before the program's code: `prefixLength`, the
 * wrapper's text on line 1, and `inserted`, each text put before program
 * code on a program line as [line, column, width] (column 0-based, in the
 * program's own source), by column: undone in the columns an error shows.
 */
const compiled = { prefixLength: 0, inserted: [] };

/**
 * The program as a function of its scope's names, returning the program's
 * async function. The names are parameters of an enclosing function, not of
 * the program's own, so that the program's declarations may shadow them
 * (R-RUN-6, R-VARS-2) in every mode. With `options.capture`, the body is
 * given a declaration that reads its top-level names (R-VARS-4); with
 * `options.lastExpression` a last bare expression is returned (R-VARS-7).
 */
export function compile(source, language, names, options = {}) {
  const nested = options.capture || options.lastExpression;
  // R-JS-3: static imports become bindings first in the body, on line 1.
  const modular = mayHaveModuleSyntax(source)
    ? moduleSyntax(source, { importer: IMPORT, meta: META }, language === 'typescript' ? stripTypes : null)
    : null;
  state.meta = modular?.meta ?? false;
  // On line 1, so that lines keep their numbers. A module is strict code, as
  // under Node. The body awaits once before the program's first statement
  // (after its directives): the promise it returns is then settled through
  // `then` before the program could replace it (R-JS-4).
  const strict = modular !== null && modular.module ? "'use strict'; " : '';
  const head = nested
    ? `(function (${[...names, REGISTER].join(', ')}) { ${strict}return async function () { await ${REGISTER}(${CAPTURE});`
    : `(function (${names.join(', ')}) { ${strict}return async function () {${directives(source) ? '' : ' await null;'}`;
  const prefix = head + (modular?.hoisted ?? '');
  compiled.prefixLength = prefix.length;
  compiled.inserted = [[1, 0, compiled.prefixLength], ...(modular?.widened ?? [])];
  let code = `${prefix}${modular?.source ?? source}\n}; })`;
  if (language === 'typescript') code = stripTypes(code);
  if (nested) {
    const edited = topLevel(code, { ...options, capture: CAPTURE, variables: options.variables });
    code = edited.code;
    for (const [line, column, width] of edited.inserted) {
      compiled.inserted.push([line, line === 1 ? column - compiled.prefixLength : column, width]);
    }
    compiled.inserted.sort((a, b) => a[1] - b[1]);
  }
  let script;
  try {
    script = new vm.Script(code, {
      filename: FILENAME,
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
  } catch (err) {
    // amaro strips types but leaves decorators, which Node 20 cannot parse:
    // V8's "Invalid or unexpected token" alone does not say why.
    if (err instanceof SyntaxError && atDecorator(err.stack)) err.message += ' (decorators are not supported)';
    throw err;
  }
  return script.runInThisContext();
}

/** Whether `source` may start with a directive ('use strict'), which must stay its first statement. */
const directives = (source) => RegExpPrototypeExec(/^(?:\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*['"]/, source) !== null;

/** Whether the caret of a syntax error's stack (as V8 shows it) is at `@name`. */
function atDecorator(stack) {
  const shown = /^<program>:\d+\n(.*)\n( *)\^/.exec(stack);
  return shown !== null && /^@[\p{ID_Start}$_]/u.test(shown[1].slice(shown[2].length));
}

let amaroModule;

function loadAmaro() {
  amaroModule ??= createRequire(import.meta.url)('amaro');
  return amaroModule;
}

/** TypeScript `code` with its types blanked (amaro), or a SyntaxError at its line (`line`: the first's). */
function stripTypes(code, line = 1) {
  try {
    return loadAmaro().transformSync(code, { mode: 'strip-only' }).code;
  } catch (err) {
    const what = err.code === 'UnsupportedSyntax'
      ? `${err.message} (use plain TypeScript types only: no enum, namespace or parameter properties)`
      : err.message;
    const syntax = new SyntaxError(what);
    syntax.programLine = line + (err.startLine ?? 1) - 1;
    throw syntax;
  }
}

/** A 1-based column of the compiled code as a column of the program's source line. */
export function programColumn(line, column) {
  let at = column - 1;
  for (let i = 0; i < compiled.inserted.length; i++) { // by column: each undone in turn
    const row = compiled.inserted[i][0];
    const where = compiled.inserted[i][1];
    const width = compiled.inserted[i][2];
    if (row === line && at >= where + width) at -= width;
    else if (row === line && at >= where) at = where; // inside the inserted text
  }
  return at + 1;
}

/** Where a syntax error is, as V8 shows it: `<program>:2`, the line, a caret. */
export function syntaxContext(stack, line) {
  const shown = RegExpPrototypeExec(/^<program>:\d+\n(.*)\n(.*)\n/, stack);
  if (!shown) return [`<program>:${line}`];
  const cut = line === 1 ? compiled.prefixLength : 0; // line 1 starts with the wrapper's prefix
  return [`<program>:${line}`, StringPrototypeSlice(shown[1], cut), StringPrototypeSlice(shown[2], cut)];
}
