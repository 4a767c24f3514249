// mode: script
setTimeout(() => console.log("t30"), 30);
setTimeout(() => console.log("t10"), 10);
setTimeout(() => console.log("t20"), 20);
setTimeout(() => console.log("t0"), 0);
console.log("scheduled");
