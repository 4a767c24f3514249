// mode: script
console.log("to stdout");
console.error("to stderr");
console.warn("warning goes to stderr");
console.info("info goes to stdout");
console.debug("debug goes to stdout");
process.stdout.write("raw stdout no newline");
process.stdout.write("\n");
process.stderr.write("raw stderr\n");
