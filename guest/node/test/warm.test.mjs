// The warm-up of a pooled guest (warm.mjs): a TypeScript guest's loads the
// type stripper before its RUN, a JavaScript guest's does not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { warmSteps } from '../warm.mjs';

const require = createRequire(import.meta.url);
const stripperLoaded = () => Object.keys(require.cache).some((file) => file.includes('/amaro/'));

test("only a TypeScript guest's warm-up loads the type stripper", () => {
  const javascript = warmSteps();
  const typescript = warmSteps({ typescript: true });
  assert.equal(typescript.length, javascript.length + 1);
  javascript.at(-1)();
  assert.equal(stripperLoaded(), false);
  typescript.at(-1)();
  assert.equal(stripperLoaded(), true);
});
