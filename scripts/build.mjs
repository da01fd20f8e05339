// Builds dist/ from src/: the TypeScript compile, then the non-TypeScript assets a built package needs
// (the demo's sample project, the inspector's page). Runs before `npm pack`/`npm publish` ("prepack"), before the demo
// ("npm run demo") and before the tests (test/global-setup.ts rebuilds when src/ changed).
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const tsc = require.resolve("typescript/bin/tsc");

// No clean first: tsc overwrites what it emits, and a build never pulls dist/ from under a process using it.
execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.json")], { stdio: "inherit", cwd: root });

// Asset folders copied as they are; each is optional so a partial tree still builds.
for (const assets of ["demo/sample", "demo/scenario.json", "inspect/page"]) {
  const from = join(root, "src", assets);
  if (existsSync(from)) cpSync(from, join(root, "dist", assets), { recursive: true });
}
// The inspector's layout library, vendored next to its page: an installed package has no devDependencies.
const vendor = join(root, "dist", "inspect", "page", "vendor");
mkdirSync(vendor, { recursive: true });
// ELK lays the charts out (compound graphs, in a worker): its API and its worker script, with its licence.
const elkDir = dirname(require.resolve("elkjs/package.json"));
cpSync(join(elkDir, "lib", "elk-api.js"), join(vendor, "elk-api.js"));
cpSync(join(elkDir, "lib", "elk-worker.min.js"), join(vendor, "elk-worker.min.js"));
cpSync(join(elkDir, "LICENSE.md"), join(vendor, "elk.LICENSE.md"));

const cli = join(root, "dist", "cli", "main.js");
if (existsSync(cli)) chmodSync(cli, 0o755);
