import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/** Compiles files under strict TypeScript as a consumer would: `statecraft` is the built package (its dist/*.d.ts). */
export function compileStrict(files: string[]): { ok: boolean; output: string } {
  // Inside the package folder, so that `from "statecraft"` resolves to the package itself.
  const dir = mkdtempSync(join(root, ".types-check-"));
  try {
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", lib: ["ES2023", "DOM"], types: ["node"], noEmit: true, skipLibCheck: true },
        files,
      }),
    );
    try {
      execFileSync(process.execPath, [tsc, "-p", dir], { cwd: dir, encoding: "utf8", timeout: 120_000 });
      return { ok: true, output: "" };
    } catch (error) {
      return { ok: false, output: String((error as { stdout?: string }).stdout ?? error) };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the package's types, as a strict consumer uses them", () => {
  it("narrow trace lines and events, infer a tool's input from its schema, type hooks by the run's tools, give run.result", () => {
    const { ok, output } = compileStrict([join(import.meta.dirname, "fixtures", "consumer.ts")]);
    expect(output).toBe("");
    expect(ok).toBe(true);
  }, 180_000);
});
