// Run before `npm pack` and `npm publish` ("prepack"): warns (on stderr, without failing, since the tests pack the
// package too) about package.json fields a published package should have and this one does not yet. The project has
// no public address so far; docs/releasing.md says what to set before the first publish.
//   node scripts/release-check.mjs [path/to/package.json]
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const file = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..", "package.json");
const pkg = JSON.parse(readFileSync(file, "utf8"));

// What npm shows on the package's page and `npm bugs`/`npm repo` open: without them users can't find the source or
// report a problem.
const wanted = {
  repository: 'the source repository, e.g. { "type": "git", "url": "git+https://example.org/owner/statecraft.git" }',
  homepage: "the project's page (often the repository's README)",
  bugs: 'where to report a problem, e.g. { "url": "https://example.org/owner/statecraft/issues" }',
};
const missing = Object.keys(wanted).filter((field) => {
  const value = pkg[field];
  if (typeof value === "string") return value.trim() === "";
  // The object forms: repository { type, url }, bugs { url, email } (either will do).
  const given = (v) => typeof v === "string" && v.trim() !== "";
  return typeof value !== "object" || value === null || !(given(value.url) || (field === "bugs" && given(value.email)));
});
if (missing.length > 0) {
  console.warn(
    `warning: package.json has no ${missing.map((f) => `"${f}"`).join(", ")}; set ${missing.length === 1 ? "it" : "them"} before publishing (docs/releasing.md):\n` +
      missing.map((f) => `  ${f}: ${wanted[f]}`).join("\n"),
  );
}
