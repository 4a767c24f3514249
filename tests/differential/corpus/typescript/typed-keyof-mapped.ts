// mode: script
type Flags<T> = { [K in keyof T]: boolean };
interface Features { search: string; export: number }
const enabled: Flags<Features> = { search: true, export: false };
const names = Object.keys(enabled) as (keyof Features)[];
console.log(names.filter((n) => enabled[n]));
