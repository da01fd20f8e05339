// Builds dist/ from src/: the declarations (tsc, which also type-checks), the JavaScript (bundled by rolldown:
// scripts/bundle.mjs), then the non-TypeScript assets a built package needs (the demo's sample project, the
// inspector's page). Runs before `npm pack`/`npm publish` ("prepack"), before the demo
// ("npm run demo") and before the tests (test/global-setup.ts rebuilds when src/ changed).
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { bundle } from "./bundle.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
const require = createRequire(import.meta.url);
const tsc = require.resolve("typescript/bin/tsc");

// Every file this build writes; whatever else is in dist/ afterwards is stale (a moved or deleted source, an old
// folder) and is removed at the end, so `npm pack` ships exactly this build. Not a clean first: a build never pulls
// dist/ from under a process using it (a demo, a test run), it only overwrites and then prunes.
const written = new Set();

let listed;
try {
  listed = execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.json"), "--emitDeclarationOnly", "--listEmittedFiles"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
} catch (error) {
  // tsc reports type errors on stdout.
  process.stdout.write(error.stdout ?? "");
  throw new Error("the TypeScript build failed (errors above); dist/ was left as it was");
}
for (const line of listed.split("\n")) if (line.startsWith("TSFILE: ")) written.add(resolve(line.slice("TSFILE: ".length).trim()));
if (written.size === 0) throw new Error("tsc emitted no files: is tsconfig.json's outDir still dist/?");
for (const file of await bundle(root)) written.add(resolve(file));

/** Copies a file or folder and records every file it wrote. */
function copy(from, to) {
  cpSync(from, to, { recursive: true });
  // Walks the source, not the copy: a file left in the copy's folder by an older build is not this build's.
  const note = (source, target) => {
    if (statSync(source).isDirectory()) for (const entry of readdirSync(source)) note(join(source, entry), join(target, entry));
    else written.add(resolve(target));
  };
  note(from, to);
}

// Asset folders copied as they are; each is optional so a partial tree still builds.
for (const assets of ["demo/sample", "demo/scenario.json", "inspect/page"]) {
  const from = join(root, "src", assets);
  if (existsSync(from)) copy(from, join(dist, assets));
}
// The inspector's layout library, vendored next to its page: an installed package has no devDependencies.
const vendor = join(dist, "inspect", "page", "vendor");
mkdirSync(vendor, { recursive: true });
// ELK lays the charts out (compound graphs, in a worker): its API and its worker script, with its licence.
const elkDir = dirname(require.resolve("elkjs/package.json"));
copy(join(elkDir, "lib", "elk-api.js"), join(vendor, "elk-api.js"));
copy(join(elkDir, "lib", "elk-worker.min.js"), join(vendor, "elk-worker.min.js"));
copy(join(elkDir, "LICENSE.md"), join(vendor, "elk.LICENSE.md"));

const cli = join(dist, "cli", "main.js");
if (existsSync(cli)) chmodSync(cli, 0o755);

/** Removes what this build did not write; returns whether `dir` is empty afterwards. */
function prune(dir) {
  let empty = true;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (prune(path)) rmdirSync(path);
      else empty = false;
    } else if (written.has(resolve(path))) empty = false;
    else unlinkSync(path);
  }
  return empty;
}
prune(dist);
