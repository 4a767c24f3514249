// mode: script
const EventEmitter = require("events");
class Job extends EventEmitter {
  run() {
    this.emit("start", "job-1");
    this.emit("progress", 50);
    this.emit("done", { ok: true });
  }
}
const job = new Job();
job.on("start", (id) => console.log("start", id));
job.on("progress", (p) => console.log(`progress ${p}%`));
job.once("done", (r) => console.log("done", r));
job.run();
console.log(job.listenerCount("done"));
