// Regenerates the docs that are derived from code constants (run after `npm run build`).
import { writeFileSync } from "node:fs";
const root = new URL("../", import.meta.url);
const { renderErrorsDoc } = await import(new URL("dist/core/errors-doc.js", root).href);
const { renderHooksDoc } = await import(new URL("dist/contracts/hooks-doc.js", root).href);
writeFileSync(new URL("docs/errors.md", root), renderErrorsDoc());
writeFileSync(new URL("docs/hooks.md", root), renderHooksDoc());
console.log("docs/errors.md and docs/hooks.md written");
