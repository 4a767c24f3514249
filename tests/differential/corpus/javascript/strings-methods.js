// mode: script
const s = "  Hello, World!  ";
console.log(JSON.stringify(s.trim()), s.trimStart().length, s.trimEnd().length);
console.log(s.toUpperCase(), s.toLowerCase());
console.log(s.includes("World"), s.startsWith("  He"), s.endsWith("!  "));
console.log(s.indexOf("o"), s.lastIndexOf("o"), s.at(-3), s.charAt(2), s.codePointAt(2));
console.log("abc".repeat(3), "a,b,,c".split(","), "x".localeCompare("y"));
console.log("straße".normalize("NFD").length, "é".normalize("NFD").length);
