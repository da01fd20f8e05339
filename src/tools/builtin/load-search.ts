import type * as FindFiles from "./find-files.js";
import type * as Gitignore from "./gitignore.js";
import type * as SearchBase from "./search-base.js";

export type SearchKit = Pick<typeof SearchBase, "patternProblem" | "resolveSearchBase"> &
  Pick<typeof Gitignore, "GitignoreRules"> &
  Pick<typeof FindFiles, "findFiles">;

let loaded: Promise<SearchKit> | undefined;

/**
 * What glob and grep search with (the search folder, .gitignore rules, the file walk), loaded by their first call:
 * a program that imports statecraft and never searches loads none of it.
 */
export function loadSearch(): Promise<SearchKit> {
  loaded ??= Promise.all([import("./search-base.js"), import("./gitignore.js"), import("./find-files.js")]).then(([base, gitignore, find]) => ({
    patternProblem: base.patternProblem,
    resolveSearchBase: base.resolveSearchBase,
    GitignoreRules: gitignore.GitignoreRules,
    findFiles: find.findFiles,
  }));
  return loaded;
}
