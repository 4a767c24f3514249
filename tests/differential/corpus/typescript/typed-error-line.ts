// mode: script
interface Config {
  retries: number;
}
const config = {} as Config;
const attempts: number[] = [];
for (let i = 0; i < 2; i++) attempts.push(i);
console.log(attempts);
const retries: string = (config as any).retries.toString();
console.log(retries);
