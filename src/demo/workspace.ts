import { cpSync, existsSync, mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The bundled sample project (copied next to the compiled code by the build). */
export function demoSampleDir(): string {
  return fileURLToPath(new URL("./sample/", import.meta.url));
}

/** The bundled scripted scenario the demo plays. */
export function demoScenarioFile(): string {
  return fileURLToPath(new URL("./scenario.json", import.meta.url));
}

/** The sample's test command: the one command the demo's policy lets `bash` run. */
/** The name the demo's scripted model runs under (the trace records it). */
export const DEMO_MODEL_NAME = "statecraft-demo-script";

export const DEMO_TEST_COMMAND = "node test/slugify.test.js";

/**
 * Copies the sample project into a new folder under the system's temporary directory (`os.tmpdir()`, so `TMPDIR` is
 * honoured) and returns its real path. The person's own files are never touched.
 */
export function prepareDemoWorkspace(tempRoot: string = tmpdir()): string {
  const sample = demoSampleDir();
  if (!existsSync(sample)) {
    throw new Error(`the demo's sample project is missing at ${sample}; rebuild the package (npm run build)`);
  }
  const dir = realpathSync(mkdtempSync(join(tempRoot, "statecraft-demo-")));
  cpSync(sample, dir, { recursive: true });
  return dir;
}
