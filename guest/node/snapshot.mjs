// The guest as one script, for a user-land startup snapshot. Node 20
// snapshots a single script without ES modules (nodejs.org/api/cli.html,
// --build-snapshot), so main.mjs and the modules it imports are written out
// as one: each module becomes a function returning its exports, in the order
// they are first imported. Only the forms the guest's modules use are taken
// (named exports of declarations, named and default imports, import.meta.url);
// anything else fails the build, and guests then start from main.mjs as before.
// Built-in modules come from require(), which a snapshot's script has.
//
//   node snapshot.mjs OUT.blob [NODE_FLAGS...]
//
// builds the blob for guests started with NODE_FLAGS (V8 refuses a blob built
// with other V8 flags), checks that a guest started from it says HELLO, then
// moves it to OUT.blob; a guest then starts with
//
//   node NODE_FLAGS --snapshot-blob OUT.blob -- main.mjs --cwd DIR [--warm]
//
// Nothing is left at OUT.blob unless all of it worked (exit status 0).

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { frameHeader, TYPES } from './codec.mjs';

const acorn = createRequire(import.meta.url)('acorn');

const ENTRY = fileURLToPath(new URL('./main.mjs', import.meta.url));

class Unsupported extends Error {}

/** `file` as the body of a function (its exports, under its path), and the modules it imports. */
function rewrite(file) {
  const source = fs.readFileSync(file, 'utf8');
  const tree = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  const edits = []; // [start, end, text], in source order
  const imports = [];
  const exported = [];
  for (const node of tree.body) {
    if (node.type === 'ImportDeclaration') {
      const from = node.source.value;
      const local = from.startsWith('node:') ? `require(${JSON.stringify(from)})` : null;
      let target = local;
      if (target === null) {
        if (!from.startsWith('./')) throw new Unsupported(`${file}: import from ${from}`);
        const imported = fileURLToPath(new URL(from, pathToFileURL(file)));
        imports.push(imported);
        target = `__modules[${JSON.stringify(imported)}]`;
      }
      edits.push([node.start, node.end, `const ${binding(node, file, local !== null)} = ${target};`]);
    } else if (node.type === 'ExportNamedDeclaration') {
      const declaration = node.declaration;
      if (!declaration || (declaration.type === 'VariableDeclaration' && declaration.kind !== 'const')) {
        throw new Unsupported(`${file}: only \`export const|function|class\` is taken`);
      }
      const names = declaration.type === 'VariableDeclaration'
        ? declaration.declarations.map((d) => d.id.name) : [declaration.id.name];
      exported.push(...names);
      edits.push([node.start, declaration.start, '']);
    } else if (node.type.startsWith('Export')) {
      throw new Unsupported(`${file}: ${node.type}`);
    }
  }
  const url = JSON.stringify(pathToFileURL(file).href);
  walk(tree, null, (node, parent) => {
    if (node.type === 'ImportExpression') throw new Unsupported(`${file}: import()`);
    if (node.type !== 'MetaProperty' || node.meta.name !== 'import') return;
    if (parent?.type !== 'MemberExpression' || parent.property.name !== 'url') {
      throw new Unsupported(`${file}: import.meta other than import.meta.url`);
    }
    edits.push([parent.start, parent.end, url]);
  });
  edits.sort((a, b) => a[0] - b[0]);
  let body = '';
  let at = 0;
  for (const [start, end, text] of edits) {
    body += source.slice(at, start) + text;
    at = end;
  }
  body += source.slice(at);
  const text = `__modules[${JSON.stringify(file)}] = (() => {\n${body}\nreturn { ${exported.join(', ')} };\n})();\n`;
  return { text, imports };
}

/** Calls `visit(node, parent)` for each node of an acorn tree. */
function walk(node, parent, visit) {
  visit(node, parent);
  for (const child of Object.values(node)) {
    for (const item of Array.isArray(child) ? child : [child]) {
      if (item !== null && typeof item === 'object' && typeof item.type === 'string') walk(item, node, visit);
    }
  }
}

/** The names an import declaration binds, as a destructuring pattern (or one name). */
function binding(node, file, builtin) {
  const named = [];
  let whole = null;
  for (const spec of node.specifiers) {
    if (spec.type === 'ImportSpecifier') {
      const name = spec.imported.name ?? spec.imported.value;
      named.push(name === spec.local.name ? name : `${name}: ${spec.local.name}`);
    } else if (spec.type === 'ImportDefaultSpecifier' && builtin) {
      whole = spec.local.name; // a built-in module's default export is the module
    } else {
      throw new Unsupported(`${file}: ${spec.type} of ${node.source.value}`);
    }
  }
  if (whole !== null && named.length > 0) throw new Unsupported(`${file}: default and named imports in one`);
  return whole ?? `{ ${named.join(', ')} }`;
}

/** The guest in one script: its modules, each once, before the first that imports it. */
export function bundle(entry = ENTRY) {
  const parts = [];
  const done = new Set();
  const visit = (file) => {
    if (done.has(file)) return;
    done.add(file);
    const { text, imports } = rewrite(file);
    imports.forEach(visit);
    parts.push(text);
  };
  visit(entry);
  return `'use strict';\nconst __modules = {};\n${parts.join('')}`;
}

// A guest's first bytes: the header of its HELLO, to its payload's length.
const HELLO_HEADER = frameHeader(TYPES.HELLO, 0).subarray(0, 4);

/**
 * Builds the blob for `flags` at `out` (see the top of this file), then
 * removes the blobs no host has used for a month (a host touches a blob it
 * uses, host/guests/node_snapshot.py) and what builds that died left.
 */
export function build(out, flags) {
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const work = fs.mkdtempSync(`${out}.build-`); // beside it: the rename stays in one file system
  try {
    const script = `${work}/guest.js`;
    const blob = `${work}/guest.blob`;
    fs.writeFileSync(script, bundle());
    const quiet = { stdio: ['ignore', 'ignore', 'ignore'], timeout: 60_000, env: { PATH: '/usr/bin:/bin' } };
    execFileSync(process.execPath, [...flags, '--snapshot-blob', blob, '--build-snapshot', script], quiet);
    // A guest on the stdio transport with no host: HELLO on stdout (a file
    // it can reopen), then its read of /dev/null ends it, whatever its status.
    const said = `${work}/hello`;
    const stdout = fs.openSync(said, 'w');
    try {
      spawnSync(process.execPath, [...flags, '--snapshot-blob', blob, '--', 'probe'],
        { ...quiet, stdio: ['ignore', stdout, 'ignore'], env: { ...quiet.env, TETHER_TRANSPORT: 'stdio' } });
    } finally {
      fs.closeSync(stdout);
    }
    if (!fs.readFileSync(said).subarray(0, HELLO_HEADER.length).equals(HELLO_HEADER)) {
      throw new Error('a guest started from the snapshot did not say HELLO');
    }
    fs.renameSync(blob, out);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  prune(path.dirname(out));
}

const UNUSED_MS = 30 * 24 * 3600_000;
const STALE_BUILD_MS = 3600_000; // a build takes seconds: one this old has died

function prune(dir) {
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    try {
      const age = Date.now() - fs.statSync(file).mtimeMs;
      if ((name.includes('.build-') && age > STALE_BUILD_MS) || (name.endsWith('.blob') && age > UNUSED_MS)) {
        fs.rmSync(file, { recursive: true, force: true });
      }
    } catch {
      // gone meanwhile
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    build(process.argv[2], process.argv.slice(3));
  } catch (err) {
    process.stderr.write(`tether-node: no startup snapshot: ${err.message}\n`);
    process.exit(1);
  }
}
