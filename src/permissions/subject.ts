import path from "node:path";
import type { AnyTool } from "../tools/define-tool.js";
import { expandHome, isWithin, resolveRealPath } from "../tools/confine.js";
import { analyzeShellCommand, type ShellCommand } from "./shell-command.js";

/** What `Tool(pattern)` rules are matched against for one call. */
export type RuleSubject =
  | { kind: "none" }
  | { kind: "text"; text: string }
  | {
      kind: "command";
      command: ShellCommand;
      /** The workspace root redirection targets and protected paths are resolved against. */
      workspace: string;
    }
  | {
      kind: "path";
      /** The path as the call gave it. */
      input: string;
      /** Resolved against the workspace, symlinks not followed. */
      lexical: ResolvedPath;
      /** Symlinks followed: the file the tool would really touch. */
      real: ResolvedPath;
    };

export interface ResolvedPath {
  absolute: string;
  /** POSIX path relative to the workspace root (`.` for the root); undefined when outside the workspace. */
  relative?: string;
}

function relativeTo(root: string, absolute: string): string | undefined {
  if (!isWithin(root, absolute)) return undefined;
  const relative = path.relative(root, absolute);
  return relative === "" ? "." : relative.split(path.sep).join("/");
}

/** The subject of a call: the tool's `permissionSubject(input)`, read as its `permissionSubjectKind` says. */
export function subjectOf(tool: AnyTool, input: unknown, cwd: string): RuleSubject {
  if (typeof tool.permissionSubject !== "function") return { kind: "none" };
  let raw: string | undefined;
  try {
    raw = tool.permissionSubject(input);
  } catch {
    // Input the engine already validated should never make this throw; without a subject only `Tool` rules match.
    raw = undefined;
  }
  if (typeof raw !== "string") return { kind: "none" };
  const kind = tool.permissionSubjectKind ?? "text";
  if (kind === "command") return { kind: "command", command: analyzeShellCommand(raw), workspace: path.resolve(cwd) };
  if (kind === "text") return { kind: "text", text: raw };

  const workspace = path.resolve(cwd);
  const lexicalAbsolute = path.resolve(workspace, expandHome(raw === "" ? "." : raw));
  let realAbsolute: string;
  try {
    realAbsolute = resolveRealPath(lexicalAbsolute);
  } catch {
    // A symlink loop: the tool refuses it; rules see the path as written.
    realAbsolute = lexicalAbsolute;
  }
  let realWorkspace: string;
  try {
    realWorkspace = resolveRealPath(workspace);
  } catch {
    realWorkspace = workspace;
  }
  return {
    kind: "path",
    input: raw,
    lexical: { absolute: lexicalAbsolute, relative: relativeTo(workspace, lexicalAbsolute) },
    real: { absolute: realAbsolute, relative: relativeTo(realWorkspace, realAbsolute) },
  };
}

/** The subject in words, for reasons shown to people and models. */
export function describeSubject(subject: RuleSubject): string | undefined {
  switch (subject.kind) {
    case "none":
      return undefined;
    case "text":
      return subject.text;
    case "command":
      return subject.command.source;
    case "path":
      return subject.real.relative ?? subject.real.absolute;
  }
}
