// A binding's arguments as a JavaScript call gives them: how many it takes
// by position, read from the signature RUN gives it.

/**
 * How many arguments a binding's `signature` (as RUN gives it, `(query: string,
 * limit?: number): Promise<...>`) takes by position: Infinity after a rest
 * parameter, null where the text does not read as expected.
 */
export function positionalCount(signature) {
  if (typeof signature !== 'string' || signature[0] !== '(') return null;
  let depth = 0;
  let count = 0;
  let inParameter = false;
  for (let i = 1; i < signature.length; i++) {
    const c = signature[i];
    if (c === '"' || c === "'" || c === '`') { // a literal type: its commas are its own
      let end = i + 1;
      while (end < signature.length && signature[end] !== c) end += signature[end] === '\\' ? 2 : 1;
      if (end >= signature.length) return null;
      i = end;
    } else if (c === '/' && signature[i + 1] === '*') { // a comment (JSDoc in a type)
      const end = signature.indexOf('*/', i + 2);
      if (end < 0) return null;
      i = end + 1;
      continue;
    } else if ('([{<'.includes(c)) {
      depth += 1;
    } else if (c === '>' && signature[i - 1] === '=') {
      continue; // a function type's arrow
    } else if (')]}>'.includes(c)) {
      if (depth === 0) return c === ')' ? count + (inParameter ? 1 : 0) : null;
      depth -= 1;
    } else if (c === ',' && depth === 0) {
      count += 1;
      inParameter = false;
      continue;
    } else if (depth === 0 && !inParameter && signature.startsWith('...', i)) {
      return Infinity;
    }
    if (!/\s/.test(c)) inParameter = true;
  }
  return null;
}
