// mode: script
async function main() {
  try {
    console.log("working");
    await null;
    throw new Error("step 2 failed");
  } finally {
    console.log("cleanup");
  }
}

main().catch((e) => console.log("caught:", e.message));
