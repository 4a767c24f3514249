// mode: script
const slugify = (s) =>
  s.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().trim().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
for (const t of ["Hello World!", "  Crème Brûlée  ", "Node.js & TypeScript: A Guide"]) console.log(slugify(t));
