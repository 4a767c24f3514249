// mode: module
const slow = new Promise((resolve) => setTimeout(() => resolve("slow"), 500));
const limit = new Promise((_, reject) => setTimeout(() => reject(new Error("deadline")), 10));
try {
  await Promise.race([slow, limit]);
} catch (e) {
  console.log("caught", e.message);
}
