#!/usr/bin/env node
// mode: script
console.log("a script with a shebang line");
