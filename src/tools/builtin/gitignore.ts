import nativeFs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import type ignoreModule from "ignore";
import type { FileSystemAdapter } from "tinyglobby";
import { listConfinedDir, listConfinedDirSync } from "../confined-open.js";

type Ignore = ReturnType<typeof ignoreModule>;
// `ignore` (CommonJS, `export =`) is required by the first .gitignore read, not when statecraft is imported.
const require = createRequire(import.meta.url);
let ignoreFactory: typeof ignoreModule | undefined;
const createIgnore = (): Ignore => (ignoreFactory ??= require("ignore") as typeof ignoreModule)();

interface IgnoreLayer {
  /** The directory whose `.gitignore` this is; its patterns are relative to it. */
  base: string;
  rules: Ignore;
}

/**
 * Answers "is this entry ignored?" with the `.gitignore` files from `root` down to the entry's directory, read once
 * each. `.git` itself is always ignored.
 */
export class GitignoreRules {
  private readonly layers = new Map<string, IgnoreLayer[]>();

  constructor(private readonly root: string) {}

  /** Layers that apply inside `dir` (absolute): every `.gitignore` from the root down to `dir`. */
  private layersFor(dir: string): IgnoreLayer[] {
    const cached = this.layers.get(dir);
    if (cached) return cached;
    const relative = path.relative(this.root, dir);
    const inside = relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
    const parent = relative === "" || !inside ? [] : this.layersFor(path.dirname(dir));
    let layers = parent;
    if (inside) {
      let text: string | undefined;
      try {
        text = nativeFs.readFileSync(path.join(dir, ".gitignore"), "utf8");
      } catch {
        text = undefined;
      }
      if (text !== undefined) layers = [...parent, { base: dir, rules: createIgnore().add(text) }];
    }
    this.layers.set(dir, layers);
    return layers;
  }

  /** Whether the entry `name` in `dir` is ignored. */
  ignores(dir: string, name: string, isDirectory: boolean): boolean {
    if (name === ".git") return true;
    const full = path.join(dir, name);
    for (const layer of this.layersFor(dir)) {
      const relative = path.relative(layer.base, full).split(path.sep).join("/");
      if (layer.rules.ignores(isDirectory ? `${relative}/` : relative)) return true;
    }
    return false;
  }

  /** Whether `absolutePath` (a folder under the root) or a folder above it is ignored. */
  ignoresFolder(absolutePath: string): boolean {
    const relative = path.relative(this.root, absolutePath);
    if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) return false;
    let dir = this.root;
    for (const part of relative.split(path.sep)) {
      if (this.ignores(dir, part, true)) return true;
      dir = path.join(dir, part);
    }
    return false;
  }

  /**
   * Rules for a search of `folder` under `root`. A folder asked for by name is searched even if it is ignored
   * (`node_modules/some-pkg`): then only the `.gitignore` files from that folder down apply.
   */
  static forSearch(root: string, folder: string): GitignoreRules {
    const rules = new GitignoreRules(root);
    return rules.ignoresFolder(folder) ? new GitignoreRules(folder) : rules;
  }

  /**
   * A file-system adapter for tinyglobby whose directory listings leave out ignored entries, so ignored folders
   * (`node_modules/`, build output) are never walked, and which lists only folders really under `confineTo` (a
   * workspace root), opened without following symlinks (see confined-open.ts).
   */
  fsAdapter(confineTo: string): FileSystemAdapter {
    const filter = (dir: string, entries: nativeFs.Dirent[]) =>
      entries.filter((entry) => !this.ignores(path.resolve(dir), entry.name, entry.isDirectory()));
    const readdir = ((dir: string, options: unknown, callback: (error: NodeJS.ErrnoException | null, entries?: nativeFs.Dirent[]) => void) => {
      listConfinedDir(confineTo, dir, (error, entries) => {
        if (error) return callback(error, []);
        callback(null, filter(dir, entries));
      });
    }) as unknown as typeof nativeFs.readdir;
    const readdirSync = ((dir: string) => filter(dir, listConfinedDirSync(confineTo, dir))) as unknown as typeof nativeFs.readdirSync;
    return { readdir, readdirSync };
  }
}
