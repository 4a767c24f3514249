#!/usr/bin/env -S node --experimental-strip-types
// mode: script
const greeting: string = "typed shebang";
console.log(greeting);
