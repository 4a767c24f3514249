// mode: script
for (let i = 0; i < 3; i++) console.log("line", i);
console.error("about to fail");
throw new SyntaxError("made up syntax error");
