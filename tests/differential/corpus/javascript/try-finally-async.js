// mode: script
async function withResource(fn) {
  console.log("open");
  try {
    return await fn();
  } finally {
    console.log("close");
  }
}

withResource(async () => {
  await new Promise((r) => setTimeout(r, 5));
  return "used";
}).then(console.log);
