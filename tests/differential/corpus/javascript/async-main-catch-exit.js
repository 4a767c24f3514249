// mode: script
async function main() {
  const data = await Promise.resolve({ rows: [] });
  if (data.rows.length === 0) throw new Error("no rows");
}

main().catch((err) => {
  console.error(`Fatal: ${err.message}`);
  process.exit(1);
});
