// mode: script
class NotFoundError extends Error {}

function find(id) {
  throw new NotFoundError(`item ${id} not found`);
}

console.log("looking");
find(7);
