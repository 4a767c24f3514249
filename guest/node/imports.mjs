// A program written as an ES module (R-JS-3): its static `import`
// declarations, `export` statements, `import.meta` and a first line `#!`
// are made into what the body of an async function can hold, every line
// and column of the rest where it was:
//
//   import fs, { readFileSync as read } from 'node:fs';   (line 3)
//
// is blanked where it stands, and its binding goes first in the body, as
// an import is evaluated before the module's code:
//
//   const __tether_import_1__ = await IMPORT("node:fs", 3, (url) => import(url), ["default", "readFileSync"]);
//   const fs = __tether_import_1__.default; const { readFileSync: read } = __tether_import_1__;
//
// `export` is dropped (nothing imports a program), `export default EXPR`
// evaluates EXPR, and `import.meta` becomes META. The statements are found
// with acorn's tokenizer, which reads TypeScript's type annotations as
// tokens too: a declaration's own types are stripped (amaro) before acorn
// reads it.

import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);
let acorn; // loaded by the first program that needs it: most runs never do
const parser = () => (acorn ??= load('acorn'));

const TOKENS = {
  ecmaVersion: 'latest', sourceType: 'script', allowAwaitOutsideFunction: true,
  allowReturnOutsideFunction: true, allowImportExportEverywhere: true,
};
const LINE_BREAK = /\r\n?|[\n\u2028\u2029]/g;

/** Whether `source` may hold module syntax: a cheap test before the tokenizer. */
export const mayHaveModuleSyntax = (source) => /\b(?:import|export)\b/.test(source) || source.startsWith('#!');

/**
 * `source` with its module syntax made into script syntax (see the top of
 * this file), or null when it has none. `names.importer` and `names.meta`
 * are the names of the guest's loader and of `import.meta` in the program's
 * scope; `strip(text)` strips a TypeScript declaration's types. Returns
 * `{ source, hoisted, widened, meta, module }`: `hoisted` the bindings to
 * put before the body, `widened` as [line, column, width] where the text
 * grew, `meta` whether the program reads `import.meta`, `module` whether it
 * is written as an ES module (strict code, as under Node). Throws a SyntaxError
 * with `programLine` for an import it cannot read.
 */
export function moduleSyntax(source, names, strip = null) {
  const edits = []; // [start, end, text]
  if (source.startsWith('#!')) { // a shebang: a comment to Node, on line 1 only
    const end = source.search(LINE_BREAK);
    edits.push([0, end < 0 ? source.length : end, '']);
  }
  let tokens;
  try {
    const from = edits.length > 0 ? edits[0][1] : 0;
    tokens = [...parser().tokenizer(source.slice(from), TOKENS)].map((t) => ({
      label: t.type.label, value: t.value, start: t.start + from, end: t.end + from,
    }));
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    tokens = []; // the compiler says what is wrong, in its own words
  }
  const imports = [];
  let meta = false;
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (['{', '(', '[', '${'].includes(token.label)) depth += 1;
    else if (['}', ')', ']'].includes(token.label)) depth -= 1;
    const previous = tokens[i - 1]?.label;
    if (previous === '.' || previous === '?.') continue; // a property: `x.import`
    if (token.label === 'import' && tokens[i + 1]?.label === '.' && tokens[i + 2]?.value === 'meta') {
      edits.push([token.start, tokens[i + 2].end, names.meta]);
      meta = true;
      i += 2;
    } else if (token.label === 'import' && depth === 0 && tokens[i + 1]?.label !== '(') {
      const end = declarationEnd(tokens, i);
      imports.push({ start: token.start, end: tokens[end].end });
      i = end;
    } else if (token.label === 'export' && depth === 0) {
      i = exported(tokens, i, edits);
    }
  }
  if (edits.length === 0 && imports.length === 0) return null;
  const hoisted = [];
  imports.forEach(({ start, end }, n) => {
    const line = lineOf(source, start);
    const text = source.slice(start, end);
    edits.push([start, end, '']);
    hoisted.push(binding(declaration(strip ? strip(text, line) : text, line), `__tether_import_${n + 1}__`,
      line, names.importer));
  });
  // A module: what only a module may hold (an import, an export, import.meta), not a shebang alone.
  const module = meta || imports.length > 0 || edits.length > (source.startsWith('#!') ? 1 : 0);
  return { ...apply(source, edits), hoisted: hoisted.join(''), meta, module };
}

/** The index of the last token of the import declaration at `i`: its module's name, attributes, `;`. */
function declarationEnd(tokens, i) {
  let j = i + 1;
  if (tokens[j]?.label !== 'string') {
    let depth = 0;
    for (; j < tokens.length; j++) {
      const label = tokens[j].label;
      if (label === '{') depth += 1;
      else if (label === '}') depth -= 1;
      else if (depth === 0 && tokens[j].value === 'from' && tokens[j + 1]?.label === 'string') break;
    }
    j += 1;
  }
  if (j >= tokens.length) return tokens.length - 1; // unfinished: the compiler says so
  return statementTail(tokens, j);
}

/** From the module's name at `j`: past `with { ... }` and a `;`. */
function statementTail(tokens, j) {
  if (['with', 'assert'].includes(tokens[j + 1]?.value) && tokens[j + 2]?.label === '{') {
    j += 2;
    while (j < tokens.length - 1 && tokens[j].label !== '}') j += 1;
  }
  return tokens[j + 1]?.label === ';' ? j + 1 : j;
}

/**
 * An `export` statement at `i`, as the edits that drop it: `export` before
 * a declaration goes, the declaration stays; `export default EXPR` becomes
 * `void EXPR`; `export { a }` and re-exports go whole. The index of the
 * last token dealt with.
 */
function exported(tokens, i, edits) {
  const token = tokens[i];
  const next = tokens[i + 1];
  if (next?.label === 'default') {
    const after = tokens[i + 2];
    const named = (k) => tokens[k]?.label === 'name';
    const declaration = (after?.label === 'function' && (named(i + 3) || (tokens[i + 3]?.label === '*' && named(i + 4))))
      || (after?.label === 'class' && named(i + 3))
      || (after?.value === 'async' && tokens[i + 3]?.label === 'function')
      || ['interface', 'abstract'].includes(after?.value);
    edits.push([token.start, after?.start ?? next.end, declaration ? '' : 'void ']);
    return i + 1;
  }
  const typeOnly = next?.value === 'type' && ['{', '*'].includes(tokens[i + 2]?.label);
  if (next?.label === '{' || next?.label === '*' || typeOnly) {
    let j = i + (typeOnly ? 2 : 1);
    if (tokens[j].label === '{') {
      while (j < tokens.length - 1 && tokens[j].label !== '}') j += 1;
    } else {
      while (j < tokens.length - 1 && tokens[j].value !== 'from') j += 1; // `* as ns from`
    }
    if (tokens[j + 1]?.value === 'from' && tokens[j + 2]?.label === 'string') j = statementTail(tokens, j + 2);
    else if (tokens[j].value === 'from' && tokens[j + 1]?.label === 'string') j = statementTail(tokens, j + 1);
    else if (tokens[j + 1]?.label === ';') j += 1;
    edits.push([token.start, tokens[j].end, '']);
    return j;
  }
  edits.push([token.start, token.end, '']); // `export const`, `export function`, `export type`...
  return i;
}

/** The one import declaration `text` holds (none once a type-only import is stripped), read by acorn. */
function declaration(text, line) {
  let tree;
  try {
    tree = parser().parse(text, { ecmaVersion: 'latest', sourceType: 'module' });
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const syntax = new SyntaxError(err.message.replace(/ \(\d+:\d+\)$/, ''));
    syntax.programLine = line + (err.loc?.line ?? 1) - 1;
    throw syntax;
  }
  return tree.body.find((node) => node.type === 'ImportDeclaration') ?? null;
}

/** The text that binds an import declaration's names, loaded through `importer`. */
function binding(node, name, line, importer) {
  if (node === null) return ''; // `import type ...`: nothing at run time
  const wanted = [];
  const declared = [];
  const named = [];
  for (const spec of node.specifiers) {
    if (spec.type === 'ImportDefaultSpecifier') {
      wanted.push('default');
      declared.push(`${spec.local.name} = ${name}.default`);
    } else if (spec.type === 'ImportNamespaceSpecifier') {
      declared.push(`${spec.local.name} = ${name}`);
    } else {
      const imported = spec.imported.name ?? spec.imported.value;
      wanted.push(imported);
      named.push(`${JSON.stringify(imported)}: ${spec.local.name}`);
    }
  }
  if (named.length > 0) declared.push(`{ ${named.join(', ')} } = ${name}`);
  const load = `await ${importer}(${JSON.stringify(node.source.value)}, ${line}, (url) => import(url), ${JSON.stringify(wanted)})`;
  return `const ${name} = ${load};${declared.length > 0 ? ` const ${declared.join(', ')};` : ''} `;
}

/**
 * `source` with `edits` applied: a removed text becomes blanks, its line
 * breaks kept; a text put in place of a shorter one is listed in
 * `widened` as [line, column, width], the width it adds.
 */
function apply(source, edits) {
  edits.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  const widened = [];
  for (const [start, end, text] of edits) {
    out += source.slice(at, start);
    const old = source.slice(start, end);
    if (text.length > old.length) {
      const [line, column] = lineAndColumn(source, start);
      widened.push([line, column, text.length - old.length]);
      out += text;
    } else {
      out += text + old.slice(text.length).replace(/[^\r\n\u2028\u2029]/g, ' ');
    }
    at = end;
  }
  return { source: out + source.slice(at), widened };
}

const lineOf = (source, offset) => lineAndColumn(source, offset)[0];

/** The 1-based line and 0-based column of `offset` in `source`, with V8's line breaks. */
function lineAndColumn(source, offset) {
  const before = source.slice(0, offset).split(LINE_BREAK);
  return [before.length, before.at(-1).length];
}
