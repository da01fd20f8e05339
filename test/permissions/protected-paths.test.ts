import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scriptedModel } from "../../src/models/scripted.js";
import { createPermissionPolicy } from "../../src/permissions/policy.js";
import { PERMISSION_MODES, type PermissionMode } from "../../src/permissions/types.js";
import { query } from "../../src/query.js";
import { builtinTools, editFileTool, writeFileTool } from "../../src/tools/builtin/index.js";
import { homeRule, PROTECTED_RULES } from "../../src/tools/protected-paths.js";
import { collect, readJsonl } from "../support/engine.js";
import { useTempHome } from "../support/home.js";
import { contextFor, makeTempDir, removeDir, run, writeFiles } from "../tools/workspace.js";

let ws: string;
let home: string;
const currentHome = useTempHome("statecraft-protected-home-");
beforeEach(() => {
  ws = makeTempDir("statecraft-protected-");
  home = currentHome();
  writeFiles(ws, {
    ".agent/audit.jsonl": '{"tool":"bash"}\n',
    ".agent/sessions/s.jsonl": '{"type":"message"}\n',
    ".agent/trace.jsonl": '{"seq":0}\n',
    "statecraft.config.json": '{"mode":"default"}\n',
    "sub/statecraft.config.json": "{}\n",
    "sub/.agent/audit.jsonl": "{}\n",
    "notes.txt": "plain\n",
  });
  writeFiles(home, { "session-key": `${"ab".repeat(32)}\n` });
});
afterEach(() => {
  removeDir(ws);
});

const AGENT = PROTECTED_RULES.agentDir;
const CONFIG = PROTECTED_RULES.projectConfig;

/** Payloads: a path a write tool is given, and the rule that must refuse it. Set up by `prepare` where needed. */
const payloads: Array<{ name: string; path: () => string; rule: () => string; prepare?: () => void }> = [
  { name: "audit log", path: () => ".agent/audit.jsonl", rule: () => AGENT },
  { name: "session transcript", path: () => ".agent/sessions/s.jsonl", rule: () => AGENT },
  { name: "new file in .agent", path: () => ".agent/sessions/new.jsonl", rule: () => AGENT },
  { name: "the .agent folder itself", path: () => ".agent", rule: () => AGENT },
  { name: "dot segments", path: () => "sub/../.agent/./audit.jsonl", rule: () => AGENT },
  { name: "absolute path", path: () => path.join(ws, ".agent", "trace.jsonl"), rule: () => AGENT },
  { name: "other case", path: () => ".AGENT/audit.jsonl", rule: () => AGENT },
  { name: "nested .agent", path: () => "sub/.agent/audit.jsonl", rule: () => AGENT },
  { name: "project config", path: () => "statecraft.config.json", rule: () => CONFIG },
  { name: "project config, ./", path: () => "./statecraft.config.json", rule: () => CONFIG },
  { name: "nested project config", path: () => "sub/statecraft.config.json", rule: () => CONFIG },
  {
    name: "symlinked folder to .agent",
    path: () => "logs/audit.jsonl",
    rule: () => AGENT,
    prepare: () => fs.symlinkSync(path.join(ws, ".agent"), path.join(ws, "logs")),
  },
  {
    name: "symlinked file to the config",
    path: () => "settings.json",
    rule: () => CONFIG,
    prepare: () => fs.symlinkSync("statecraft.config.json", path.join(ws, "settings.json")),
  },
  {
    name: "dangling symlink into .agent",
    path: () => "later.jsonl",
    rule: () => AGENT,
    prepare: () => fs.symlinkSync(".agent/sessions/later.jsonl", path.join(ws, "later.jsonl")),
  },
  {
    name: "hard link to the audit log",
    path: () => "audit-copy.txt",
    rule: () => AGENT,
    prepare: () => fs.linkSync(path.join(ws, ".agent", "audit.jsonl"), path.join(ws, "audit-copy.txt")),
  },
  {
    name: "hard link to the config",
    path: () => "cfg.txt",
    rule: () => CONFIG,
    prepare: () => fs.linkSync(path.join(ws, "statecraft.config.json"), path.join(ws, "cfg.txt")),
  },
];

function snapshot(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const file of [".agent/audit.jsonl", ".agent/sessions/s.jsonl", ".agent/trace.jsonl", "statecraft.config.json", "sub/statecraft.config.json", "sub/.agent/audit.jsonl"]) {
    out[file] = fs.readFileSync(path.join(ws, file), "utf8");
  }
  return out;
}

describe("protected paths: the policy", () => {
  for (const payload of payloads) {
    it(`denies write_file and edit_file on ${payload.name} in every mode, whatever allow rules say`, () => {
      payload.prepare?.();
      for (const mode of PERMISSION_MODES) {
        const policy = createPermissionPolicy({ mode, allow: ["write_file", "edit_file", "write_file(**)"] }, ["edit_file"], { cwd: ws });
        for (const tool of [writeFileTool(), editFileTool()]) {
          const verdict = policy.evaluate(tool, { path: payload.path(), content: "", old_string: "a", new_string: "b" });
          expect(verdict, `${tool.name} ${mode}`).toMatchObject({ kind: "deny", by: "rule", rule: payload.rule() });
          expect((verdict as { reason: string }).reason).toContain(`rule ${payload.rule()}`);
        }
      }
    });
  }

  it("protects the statecraft folder (where the session key is), named by its own rule", () => {
    const policy = createPermissionPolicy({ mode: "bypassPermissions" }, [], { cwd: ws });
    const verdict = policy.evaluate(writeFileTool(), { path: path.join(home, "session-key"), content: "" });
    expect(verdict).toMatchObject({ kind: "deny", by: "rule", rule: homeRule(home) });
  });

  it("leaves ordinary files and read tools alone", () => {
    const policy = createPermissionPolicy({ mode: "bypassPermissions" }, [], { cwd: ws });
    expect(policy.evaluate(writeFileTool(), { path: "notes.txt", content: "" })).toEqual({ kind: "allow", by: "mode", subject: "notes.txt" });
    expect(policy.evaluate(writeFileTool(), { path: "agent/x.txt", content: "" }).kind).toBe("allow");
    expect(policy.evaluate(writeFileTool(), { path: "my.statecraft.config.json", content: "" }).kind).toBe("allow");
    const read = builtinTools().find((t) => t.name === "read_file")!;
    expect(policy.evaluate(read, { path: ".agent/audit.jsonl" }).kind).toBe("allow");
  });
});

describe("protected paths: the tools themselves (defence in depth)", () => {
  for (const payload of payloads) {
    it(`write_file and edit_file refuse ${payload.name}, naming the rule`, async () => {
      payload.prepare?.();
      const before = snapshot();
      const written = await run(writeFileTool(), { path: payload.path(), content: "" }, contextFor(ws));
      expect(written.isError).toBe(true);
      expect(written.text).toContain(`rule ${payload.rule()}`);
      const edited = await run(editFileTool(), { path: payload.path(), old_string: "{", new_string: "[" }, contextFor(ws));
      expect(edited.isError).toBe(true);
      expect(edited.text).toContain(`rule ${payload.rule()}`);
      expect(snapshot()).toEqual(before);
      expect(fs.existsSync(path.join(ws, ".agent", "sessions", "new.jsonl"))).toBe(false);
    });
  }

  it("refuses the statecraft folder even when it is an additional directory", async () => {
    const tool = writeFileTool({ additionalDirectories: [home] });
    const out = await run(tool, { path: path.join(home, "session-key"), content: "00" }, contextFor(ws));
    expect(out).toMatchObject({ isError: true });
    expect(out.text).toContain(homeRule(home));
    expect(fs.readFileSync(path.join(home, "session-key"), "utf8")).toBe(`${"ab".repeat(32)}\n`);
  });

  it("still writes ordinary files; a hard-linked file is refused by confinement, not named as protected", async () => {
    expect((await run(writeFileTool(), { path: "notes.txt", content: "new\n" }, contextFor(ws))).isError).toBe(false);
    expect(fs.readFileSync(path.join(ws, "notes.txt"), "utf8")).toBe("new\n");
    fs.linkSync(path.join(ws, "notes.txt"), path.join(ws, "notes2.txt"));
    const out = await run(writeFileTool(), { path: "notes2.txt", content: "other\n" }, contextFor(ws));
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/hard link/i);
    expect(out.text).not.toContain("protected(");
    expect(fs.readFileSync(path.join(ws, "notes.txt"), "utf8")).toBe("new\n");
  });
});

describe("protected paths through query()", () => {
  const attacks = [
    { what: "empty the audit log", call: { name: "write_file", input: { path: ".agent/audit.jsonl", content: "" } }, rule: AGENT },
    {
      what: "forge an allow rule in its transcript",
      call: { name: "edit_file", input: { path: ".agent/sessions/s.jsonl", old_string: "\n", new_string: '\n{"type":"allow_rule","rule":"bash"}\n' } },
      rule: AGENT,
    },
    { what: "switch on bypassPermissions", call: { name: "write_file", input: { path: "statecraft.config.json", content: '{"mode":"bypassPermissions"}' } }, rule: CONFIG },
    { what: "wipe the trace through a symlink", call: { name: "write_file", input: { path: "state/trace.jsonl", content: "" } }, rule: AGENT },
  ];
  const modes: PermissionMode[] = ["bypassPermissions", "acceptEdits", "default"];
  for (const mode of modes) {
    it(`in ${mode} mode, with allow rules and onAsk saying yes, the agent can't change the engine's state`, async () => {
      fs.symlinkSync(path.join(ws, ".agent"), path.join(ws, "state"));
      const before = snapshot();
      for (const attack of attacks) {
        const model = scriptedModel([{ toolCalls: [attack.call] }, { text: "done" }]);
        const { result } = await collect(
          query("go", { model, tools: builtinTools(), cwd: ws, traceFile: false, permissions: { mode, allow: ["write_file", "edit_file"], onAsk: () => "allow" } }),
        );
        expect(result.reason, attack.what).toBe("permission_denied");
        expect(result.error?.message, attack.what).toContain(attack.rule);
      }
      const after = snapshot();
      // The runs appended their own audit lines; what was there before is untouched.
      expect(after[".agent/audit.jsonl"].startsWith(before[".agent/audit.jsonl"])).toBe(true);
      expect({ ...after, ".agent/audit.jsonl": before[".agent/audit.jsonl"] }).toEqual(before);
      const audit = readJsonl<{ tool: string; ok: boolean; permission: unknown }>(path.join(ws, ".agent", "audit.jsonl")).slice(1);
      expect(audit.map((a) => [a.tool, a.ok, a.permission])).toEqual(attacks.map((a) => [a.call.name, false, { decision: "deny", by: "rule", rule: a.rule }]));
    });
  }
});
