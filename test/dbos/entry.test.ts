import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

it("the main entry never loads DBOS or pg; statecraft/dbos is its own subpath", () => {
  // Every module the import resolves, reported by a loader hook.
  const loaded = (entry: string) => JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", `
    import { register } from "node:module";
    const seen = [];
    const { port1, port2 } = new MessageChannel();
    port1.on("message", (m) => seen.push(m));
    register("data:text/javascript," + encodeURIComponent('let p; export function initialize(d){p=d.port} export async function resolve(s,c,n){const r=await n(s,c); p.postMessage(r.url); return r}'), { data: { port: port2 }, transferList: [port2] });
    await import(${JSON.stringify(entry)});
    await new Promise((r) => setTimeout(r, 50));
    port1.close();
    console.log(JSON.stringify(seen.filter((u) => /dbos-sdk|node_modules\\/pg\\//.test(u))));
  `]).toString()) as string[];
  expect(loaded(join(root, "dist", "index.js"))).toEqual([]);
  // The check sees them where they are loaded.
  expect(loaded(join(root, "dist", "dbos", "index.js")).length).toBeGreaterThan(0);
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  // `default` lets require("statecraft/dbos") load it too (docs: the README's CommonJS section).
  expect(pkg.exports["./dbos"]).toEqual({ types: "./dist/dbos/index.d.ts", import: "./dist/dbos/index.js", default: "./dist/dbos/index.js" });
  expect(pkg.peerDependenciesMeta["@dbos-inc/dbos-sdk"]).toEqual({ optional: true });
  expect(pkg.dependencies["@dbos-inc/dbos-sdk"]).toBeUndefined();
});
