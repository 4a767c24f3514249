// mode: module
const wait = (ms: number): Promise<number> => new Promise((r) => setTimeout(() => r(ms), ms));
const results: number[] = [];
for (const ms of [15, 5]) results.push(await wait(ms));
console.log(results);
