import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const ENTRIES = ["statecraft", "statecraft/trace", "statecraft/inspect", "statecraft/mcp-server", "statecraft/server"] as const;
type Entry = (typeof ENTRIES)[number];

/** The names docs/architecture.md's entry-point table gives each entry (its backticked names after the entry). */
function documentedNames(): Record<Entry, string[]> {
  const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");
  const out = {} as Record<Entry, string[]>;
  for (const entry of ENTRIES) {
    const row = doc.split("\n").find((line) => line.startsWith(`| \`${entry}\` |`));
    if (!row) throw new Error(`docs/architecture.md has no entry-point row "| \`${entry}\` | …"`);
    const cells = row.split("|").slice(2).join("|");
    out[entry] = [...cells.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1]);
  }
  return out;
}

let project: string;
/** Per entry: its run-time export names, and which of them are the very values `statecraft` exports. */
let loaded: Record<Entry, { names: string[]; sameAsMain: string[] }>;

beforeAll(() => {
  // A consumer's project: the package linked into node_modules, imported by name from outside the repository.
  project = mkdtempSync(join(tmpdir(), "statecraft-entries-"));
  mkdirSync(join(project, "node_modules"));
  symlinkSync(root, join(project, "node_modules", "statecraft"), "dir");
  writeFileSync(join(project, "package.json"), JSON.stringify({ type: "module", private: true }));
  writeFileSync(
    join(project, "probe.mjs"),
    `const main = await import("statecraft");
const out = {};
for (const entry of ${JSON.stringify(ENTRIES)}) {
  const m = await import(entry);
  const names = Object.keys(m).sort();
  out[entry] = { names, sameAsMain: names.filter((n) => main[n] === m[n]) };
}
console.log(JSON.stringify(out));`,
  );
  loaded = JSON.parse(execFileSync(process.execPath, ["probe.mjs"], { cwd: project, encoding: "utf8" }));
});

afterAll(() => rmSync(project, { recursive: true, force: true }));

describe("entry points", () => {
  it("package.json exports each entry with types and import conditions pointing at built files", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    for (const [key, entry] of [[".", "statecraft"], ["./trace", "statecraft/trace"], ["./inspect", "statecraft/inspect"], ["./mcp-server", "statecraft/mcp-server"], ["./server", "statecraft/server"]]) {
      const conditions = pkg.exports[key];
      expect(conditions, `package.json "exports" has no "${key}" (${entry})`).toBeDefined();
      expect(existsSync(join(root, conditions.types)), `${entry}: types file ${conditions.types} is not built`).toBe(true);
      expect(existsSync(join(root, conditions.import)), `${entry}: import file ${conditions.import} is not built`).toBe(true);
    }
  });

  it("each entry exports what docs/architecture.md says it does", () => {
    const documented = documentedNames();
    for (const entry of ENTRIES) {
      const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
      const key = entry === "statecraft" ? "." : `./${entry.slice("statecraft/".length)}`;
      const types = readFileSync(join(root, pkg.exports[key].types), "utf8");
      for (const name of documented[entry]) {
        // A value must be there at run time; a type only in the declarations.
        const found = loaded[entry].names.includes(name) || new RegExp(`\\b${name}\\b`).test(types);
        expect(found, `${entry} does not export ${name}, which docs/architecture.md lists for it`).toBe(true);
      }
    }
    expect(documented["statecraft/trace"]).toContain("replay");
    expect(documented["statecraft/inspect"]).toContain("startInspector");
    expect(documented["statecraft/mcp-server"]).toContain("mcpServer");
    expect(documented["statecraft/server"]).toContain("serve");
  });

  it("the mcp-server entry exports only what it documents, and loads no MCP SDK until mcpServer() is called", () => {
    expect(loaded["statecraft/mcp-server"].names.filter((n) => !documentedNames()["statecraft/mcp-server"].includes(n))).toEqual([]);
    const probe = `import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(\`export async function resolve(s, c, next) { const r = await next(s, c); if (r.url.includes("@modelcontextprotocol/")) console.log("SDK " + r.url); return r; }\`));
await import("statecraft/mcp-server");`;
    writeFileSync(join(project, "sdk-probe.mjs"), probe);
    expect(execFileSync(process.execPath, ["sdk-probe.mjs"], { cwd: project, encoding: "utf8" })).not.toContain("SDK ");
  });

  it("the trace and inspect entries export only what they document, and statecraft still exports all of it", () => {
    const documented = documentedNames();
    for (const entry of ["statecraft/trace", "statecraft/inspect"] as const) {
      const { names, sameAsMain } = loaded[entry];
      expect(names.filter((n) => !documented[entry].includes(n)), `${entry} exports names docs/architecture.md does not list`).toEqual([]);
      // The very same values: one module behind both entries, so `instanceof` and identity hold across them.
      expect(sameAsMain, `statecraft no longer re-exports these names of ${entry}`).toEqual(names);
    }
  });

  it("statecraft/otel is exported, exports what docs/architecture.md lists, and is not re-exported by statecraft", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    const conditions = pkg.exports["./otel"];
    expect(conditions, 'package.json "exports" has no "./otel"').toBeDefined();
    expect(existsSync(join(root, conditions.types)) && existsSync(join(root, conditions.import))).toBe(true);
    const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");
    const row = doc.split("\n").find((line) => line.startsWith("| `statecraft/otel` |"));
    expect(row, "docs/architecture.md has no statecraft/otel row").toBeDefined();
    const documented = [...row!.split("|").slice(2).join("|").matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1]);
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", 'const m = await import("statecraft/otel"); const main = await import("statecraft"); console.log(JSON.stringify({ names: Object.keys(m).sort(), inMain: Object.keys(m).filter((n) => n in main) }));'], { cwd: project, encoding: "utf8" });
    const { names, inMain } = JSON.parse(out) as { names: string[]; inMain: string[] };
    expect(names).toEqual(["CONVENTIONS_VERSION", "openTelemetry"]);
    const types = readFileSync(join(root, conditions.types), "utf8");
    for (const name of documented) expect(names.includes(name) || new RegExp(`\\b${name}\\b`).test(types), `statecraft/otel does not export ${name}`).toBe(true);
    expect(names.filter((n) => !documented.includes(n))).toEqual([]);
    expect(inMain).toEqual([]);
  });
});
