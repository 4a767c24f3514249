// mode: script
class HttpError extends Error {
  constructor(status, text) {
    super(`HTTP ${status}: ${text}`);
    this.name = "HttpError";
    this.status = status;
  }
}
async function get() {
  throw new HttpError(503, "Service Unavailable");
}
get();
