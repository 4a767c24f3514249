// The guest as one script for a startup snapshot (snapshot.mjs): the modules
// it takes become one script that runs as they do; any other form of import
// or export fails the bundle (guests then start from main.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { bundle } from '../snapshot.mjs';

function modules(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-bundle-'));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

test('the bundle runs as the modules do: imports, exports, built-ins, import.meta.url', () => {
  const dir = modules({
    'entry.mjs': "import fs from 'node:fs';\nimport { twice, NAME as name } from './lib.mjs';\n"
      + "import { where } from './other.mjs';\n"
      + "fs.writeSync(1, JSON.stringify([twice(21), name, where, import.meta.url.endsWith('entry.mjs')]));\n",
    'lib.mjs': "import { where } from './other.mjs';\nexport const NAME = 'lib', UNUSED = where;\n"
      + 'export function twice(n) { return 2 * n; }\nconst hidden = 1;\n',
    'other.mjs': "export class Where {}\nexport const where = 'other';\n",
  });
  try {
    const script = path.join(dir, 'bundle.js');
    fs.writeFileSync(script, bundle(path.join(dir, 'entry.mjs')));
    const out = execFileSync(process.execPath, [script], { encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out), [42, 'lib', 'other', true]);
    // Each module once, before the first module that imports it.
    const text = fs.readFileSync(script, 'utf8');
    assert.equal(text.split('other.mjs"] = ').length, 2);
    assert.ok(text.indexOf('other.mjs"] = ') < text.indexOf('lib.mjs"] = '));
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});

test('forms the bundle does not take fail it', () => {
  const forms = [
    'export default 1;',
    'const a = 1;\nexport { a };',
    "export * from './x.mjs';",
    'export let a = 1;',
    "import * as x from 'node:fs';",
    "import x from './x.mjs';",
    "import x from 'acorn';",
    "const x = await import('node:fs');",
    'const x = import.meta.dirname;',
  ];
  for (const form of forms) {
    const dir = modules({ 'entry.mjs': form, 'x.mjs': 'export const x = 1;' });
    try {
      assert.throws(() => bundle(path.join(dir, 'entry.mjs')), undefined, form);
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  }
});

test("the guest's own modules bundle into a script that compiles", () => {
  const text = bundle();
  assert.doesNotThrow(() => new Function(text)); // eslint-disable-line no-new-func -- compiles only
  assert.ok(!/^\s*(import|export)\s/m.test(text));
});
