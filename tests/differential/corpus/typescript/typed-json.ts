// mode: script
interface Payload { id: number; tags: string[]; meta?: { source: string } }
const raw = '{"id": 7, "tags": ["a", "b"], "meta": {"source": "api"}}';
const payload = JSON.parse(raw) as Payload;
console.log(payload.id, payload.tags.join("+"), payload.meta?.source);
console.log(JSON.stringify(payload, null, 2));
