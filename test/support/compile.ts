import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const root = join(import.meta.dirname, "..", "..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/**
 * Compiles files under strict TypeScript as a consumer would: `statecraft` is the built package (its dist/*.d.ts).
 * `sources` are written into a temporary folder inside the package folder (so that `from "statecraft"` resolves to
 * the package itself), by file name; `.mjs`/`.js` files are checked as JavaScript (checkJs). `stricter` adds compiler
 * options (noUncheckedIndexedAccess, exactOptionalPropertyTypes). Returns tsc's output.
 */
export function compileStrict(sources: Record<string, string>, extraFiles: string[] = [], stricter: Record<string, boolean> = {}): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(root, ".types-check-"));
  try {
    for (const [name, text] of Object.entries(sources)) writeFileSync(join(dir, name), text);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          lib: ["ES2023", "DOM"],
          types: ["node"],
          noEmit: true,
          skipLibCheck: true,
          allowJs: true,
          checkJs: true,
          ...stricter,
        },
        files: [...Object.keys(sources), ...extraFiles],
      }),
    );
    try {
      execFileSync(process.execPath, [tsc, "-p", dir], { cwd: dir, encoding: "utf8", timeout: 170_000 });
      return { ok: true, output: "" };
    } catch (error) {
      // File names in the output are the temporary folder's: keep only the name, which says which block it was.
      return { ok: false, output: String((error as { stdout?: string }).stdout ?? error).replaceAll(`${dir}/`, "") };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
