// The top-level names of a program body (spec §7.9, R-VARS-4) and its last
// bare expression (R-VARS-7), found with acorn in the wrapped program that
// main.mjs compiles:
//
//   (function (scope...) { ['use strict';] return async function () { await register(capture); BODY
//   }; })

import { createRequire } from 'node:module';

let acorn; // loaded by the first program that needs it: most runs never do
const parse = (code, options) => (acorn ??= createRequire(import.meta.url)('acorn')).parse(code, options);

/**
 * `code` with, when `options.capture` names it, a function declaration at
 * the end of the body that returns [name, getter] for each top-level name
 * (declared names, then `options.variables`), and with the last bare
 * expression returned when `options.lastExpression`. Positions before the
 * inserted text are unchanged; `inserted` lists the texts put in (not those
 * in place of others) as [line, column, width] of `code`. A body acorn cannot
 * parse is returned as it is: V8 reports its syntax error in its own words.
 */
export function topLevel(code, options) {
  let tree;
  try {
    // preserveParens: a parenthesized last expression spans its parentheses,
    // so that `return (` goes before them, not inside.
    tree = parse(code, { ecmaVersion: 'latest', sourceType: 'script', preserveParens: true });
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err; // acorn missing, say: not the program's
    return { code, inserted: [] };
  }
  const outer = tree.body[0].expression.expression; // in its parentheses: the function of the scope's names
  const inner = outer.body.body.at(-1).argument; // the program's async function
  const [register, ...statements] = inner.body.body;
  const edits = []; // [start, end, text], applied from the end
  // The body's directives ('use strict') must come first: the register call
  // moves behind them, and its place is blanked (columns stay as they were).
  let prologue = 0;
  while (statements[prologue]?.type === 'ExpressionStatement'
         && statements[prologue].expression.type === 'Literal'
         && typeof statements[prologue].expression.value === 'string') prologue += 1;
  // A variable the body declares again with `var` (`var rows = rows || []`)
  // would start undefined, its `var` hiding the scope's name: it is given
  // the variable's value first, as if the program had assigned it (R-VARS-2).
  const carried = new Set(options.variables ?? []);
  const redeclared = [];
  for (const statement of statements) {
    declared(statement, (name) => { if (carried.delete(name)) redeclared.push(name); }, false);
  }
  const registerName = register.expression.argument.callee.name; // await register(capture)
  const initial = redeclared.map((name) => `${name} = ${registerName}.initial[${JSON.stringify(name)}];`).join('');
  if (prologue > 0) {
    const call = code.slice(register.start, register.end);
    edits.push([register.start, register.end, ' '.repeat(call.length)]);
    edits.push([statements[prologue - 1].end, statements[prologue - 1].end, `;${call}${initial}`]);
  } else if (initial) {
    edits.push([register.end, register.end, initial]);
  }
  if (options.lastExpression) {
    const last = statements.at(-1);
    if (last?.type === 'ExpressionStatement' && statements.length > prologue) {
      edits.push([last.expression.start, last.expression.start, 'return (']);
      edits.push([last.expression.end, last.end, ');']); // in place of its `;`, if any
    }
  }
  if (options.capture) {
    const names = [];
    const seen = new Set();
    const add = (name) => {
      if (!seen.has(name)) {
        seen.add(name);
        names.push(name);
      }
    };
    for (const statement of statements) declared(statement, add, true);
    for (const name of options.variables ?? []) add(name);
    const getters = names.map((name) => `[${JSON.stringify(name)}, () => ${name}]`).join(', ');
    const end = inner.body.end - 1; // the body's closing brace
    edits.push([end, end, `\n;function ${options.capture}() { return [${getters}]; }\n`]);
  }
  // From the end; of texts put in at one place, the one pushed first comes first.
  edits.forEach((edit, i) => edit.push(i));
  edits.sort((a, b) => b[0] - a[0] || b[3] - a[3]);
  // Where text went in before code on its line: the error's columns undo it.
  const inserted = edits.filter(([start, end]) => start === end)
    .map(([start, , text]) => [...lineAndColumn(code, start), text.length]);
  for (const [start, end, text] of edits) code = code.slice(0, start) + text + code.slice(end);
  return { code, inserted };
}

/** The 1-based line and 0-based column of `offset` in `code`, with V8's line breaks. */
function lineAndColumn(code, offset) {
  const before = code.slice(0, offset).split(/\r\n?|[\n\u2028\u2029]/);
  return [before.length, before.at(-1).length];
}

/** Calls `add` for the names `node` declares in the body's scope. */
function declared(node, add, top) {
  if (node === null || typeof node !== 'object') return;
  switch (node.type) {
    case 'VariableDeclaration':
      if (top || node.kind === 'var') {
        for (const declarator of node.declarations) patternNames(declarator.id, add);
      }
      for (const declarator of node.declarations) declared(declarator.init, add, false);
      return;
    case 'FunctionDeclaration':
    case 'ClassDeclaration':
      if (top) add(node.id.name);
      return; // a function's own declarations are its own
    case 'FunctionExpression':
    case 'ArrowFunctionExpression':
    case 'ClassExpression':
      return;
    default:
      break;
  }
  // `var` anywhere in the body's blocks (not in nested functions) is the body's.
  for (const key of ['body', 'consequent', 'alternate', 'block', 'handler', 'finalizer', 'cases', 'init', 'left']) {
    const child = node[key];
    if (Array.isArray(child)) child.forEach((c) => declared(c, add, false));
    else if (child && typeof child === 'object' && typeof child.type === 'string') declared(child, add, false);
  }
}

function patternNames(pattern, add) {
  switch (pattern?.type) {
    case 'Identifier': add(pattern.name); break;
    case 'ObjectPattern':
      for (const p of pattern.properties) patternNames(p.type === 'RestElement' ? p.argument : p.value, add);
      break;
    case 'ArrayPattern': pattern.elements.forEach((e) => patternNames(e, add)); break;
    case 'RestElement': patternNames(pattern.argument, add); break;
    case 'AssignmentPattern': patternNames(pattern.left, add); break;
    default: break;
  }
}
