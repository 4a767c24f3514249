// mode: script
console.log(/a+b/gi, [/x/], { re: /y$/m });
console.log(String(/z/u), /a/.toString());
