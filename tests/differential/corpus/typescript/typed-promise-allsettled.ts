// mode: script
const jobs: Promise<number>[] = [Promise.resolve(1), Promise.reject(new Error("nope")), Promise.resolve(3)];
Promise.allSettled(jobs).then((rs: PromiseSettledResult<number>[]) => {
  const ok = rs.filter((r): r is PromiseFulfilledResult<number> => r.status === "fulfilled").map((r) => r.value);
  console.log(ok, rs.length - ok.length, "failed");
});
