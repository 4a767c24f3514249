// mode: script
fetchLikeThing().then((res) => res.json());
function fetchLikeThing() {
  return Promise.resolve(undefined);
}
