// mode: script
const groupBy = <T, K extends PropertyKey>(xs: T[], key: (x: T) => K): Record<K, T[]> =>
  xs.reduce((acc, x) => {
    (acc[key(x)] ||= []).push(x);
    return acc;
  }, {} as Record<K, T[]>);
console.log(groupBy([1, 2, 3, 4, 5], (n) => (n % 2 ? "odd" : "even")));
