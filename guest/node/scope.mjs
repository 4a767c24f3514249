// What the program has in scope besides its bindings: require() and a CommonJS
// script's names, the loader of its static imports and its import.meta (R-JS-3).

import { createRequire, isBuiltin } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { types } from 'node:util';
import { errorType } from './errors.mjs';
import { ObjectAssign, SafeWeakSet } from './primordials.mjs';

/**
 * The loader of a program's static imports (R-JS-3, imports.mjs): Node's
 * built-in modules, and packages as the program's require() finds them
 * (node_packages included); a file cannot be imported, as the program is
 * one file. An error is the import's, at its line, as Node reports a
 * module it cannot link before the program runs. `load` is the program's
 * own import().
 */
export async function importModule(specifier, line, load, names) {
  // At the import's own line: the bindings were put on line 1.
  const failed = (error) => Object.assign(error, { programLine: line,
    stack: `${errorType(error)}: ${error.message}\n    at <program>:${line}:1` });
  let url = specifier;
  if (/^(?:\.{0,2}\/|file:)/.test(specifier)) {
    const error = failed(new Error(`Cannot import '${specifier}': a program is one file, with no `
      + 'files of its own to import (import Node\'s built-in modules or an installed package)'));
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  if (!isBuiltin(specifier)) {
    try {
      url = pathToFileURL(programRequire().resolve(specifier)).href;
    } catch (err) {
      if (err.code !== 'MODULE_NOT_FOUND') throw failed(err);
      const error = failed(new Error(`Cannot find package '${specifier}': only Node's built-in `
        + 'modules and the installed packages can be imported'));
      error.code = 'ERR_MODULE_NOT_FOUND';
      throw error;
    }
  }
  let namespace;
  try {
    namespace = await load(url);
  } catch (err) {
    throw failed(err);
  }
  for (const name of names) {
    if (!(name in namespace)) {
      throw failed(new SyntaxError(`The requested module '${specifier}' does not provide an export named '${name}'`));
    }
  }
  const whole = namespace.default;
  if (whole !== null && (typeof whole === 'object' || typeof whole === 'function')) modules.add(whole);
  return namespace;
}

/** What `import.meta` is in a program (R-JS-3): that of a module at `<cwd>/program.mjs`. */
export function programMeta() {
  const filename = path.join(process.cwd(), 'program.mjs');
  const url = pathToFileURL(filename).href;
  const resolve = (specifier) => (isBuiltin(specifier) ? specifier
    : pathToFileURL(programRequire().resolve(specifier)).href);
  return { url, filename, dirname: process.cwd(), resolve };
}

export function isParameterName(name) {
  try {
    new Function(name, ''); // eslint-disable-line no-new-func -- compiles, runs nothing
    return true;
  } catch {
    return false;
  }
}

let required;
export const programRequire = () => (required ??= recording(createRequire(path.join(process.cwd(), 'program.js'))));

/** What the program's require() returned: modules, which R-VARS-4 leaves out of its variables. */
const modules = new SafeWeakSet();

function recording(load) {
  const require = (id) => {
    const exports = load(id);
    if (exports !== null && typeof exports === 'object') modules.add(exports);
    return exports;
  };
  return ObjectAssign(require, load); // its resolve, cache, main and extensions
}

const { isModuleNamespaceObject } = types;
export const isModule = (value) => modules.has(value) || isModuleNamespaceObject(value); // a dynamic import's too

/**
 * What a CommonJS script has in scope besides its globals: require(), and
 * `module`, `exports`, `__filename` and `__dirname` of a script at
 * `<cwd>/program.js`, which is require.main (`require.main === module`).
 */
export function commonJs() {
  const require = programRequire();
  const filename = path.join(process.cwd(), 'program.js');
  const module = { id: '.', path: process.cwd(), filename, loaded: false, exports: {}, children: [], paths: [] };
  require.main = module;
  return [['require', require], ['module', module], ['exports', module.exports],
    ['__filename', filename], ['__dirname', process.cwd()]];
}
