import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CONFIG_FILE_NAME, NO_MODEL_MESSAGE, loadConfigFile, resolveModel, resolveRunSettings } from "../../src/cli/config.js";
import { UsageError } from "../../src/cli/usage-error.js";

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "statecraft-config-")));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** An environment whose user config folder does not exist: the user's own settings stay out of these tests. */
const noUser = { XDG_CONFIG_HOME: "/nonexistent/statecraft-tests" };
const writeConfig = (config: unknown, folder = dir) => writeFileSync(join(folder, CONFIG_FILE_NAME), JSON.stringify(config));

describe("resolveModel", () => {
  it("with nothing configured is a usage error naming every way to configure a model", () => {
    const error = (() => {
      try {
        resolveModel({}, {}, dir);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UsageError);
    const message = (error as Error).message;
    for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "STATECRAFT_MODEL", "--model script:<file>", "statecraft demo"]) {
      expect(message).toContain(name);
    }
    expect(message).toBe(NO_MODEL_MESSAGE);
  });

  it("empty environment variables count as unset", () => {
    expect(() => resolveModel({}, { OPENAI_API_KEY: "", STATECRAFT_MODEL: " " }, dir)).toThrow(UsageError);
  });

  it("takes the model name from the flag before the environment before the config file", () => {
    const config = { file: join(dir, CONFIG_FILE_NAME), config: { model: "from-config", baseUrl: "http://127.0.0.1:1/v1" } };
    const env = { STATECRAFT_MODEL: "from-env", OPENAI_BASE_URL: "http://127.0.0.1:2/v1", OPENAI_API_KEY: "k" };
    expect(resolveModel({ model: "from-flag", baseUrl: "http://127.0.0.1:3/v1" }, env, dir, config)).toEqual({
      kind: "openai",
      model: "from-flag",
      baseURL: "http://127.0.0.1:3/v1",
      apiKey: "k",
      source: "flag",
    });
    expect(resolveModel({}, env, dir, config)).toMatchObject({ model: "from-env", baseURL: "http://127.0.0.1:2/v1", source: "env" });
    expect(resolveModel({}, {}, dir, config)).toEqual({
      kind: "openai",
      model: "from-config",
      baseURL: "http://127.0.0.1:1/v1",
      source: "config",
    });
  });

  it("an API key alone is enough (the provider picks its default model)", () => {
    expect(resolveModel({}, { OPENAI_API_KEY: "sk-test" }, dir)).toEqual({ kind: "openai", apiKey: "sk-test", source: "env" });
  });

  it("script:<file> is a scripted model, resolved against the folder the command was run in", () => {
    writeFileSync(join(dir, "case.json"), "[]");
    expect(resolveModel({ model: "script:case.json" }, {}, dir)).toEqual({ kind: "script", file: join(dir, "case.json"), source: "flag" });
  });

  it("script: in the config file is resolved against the config file's folder", () => {
    const sub = join(dir, "project");
    mkdirSync(sub);
    writeFileSync(join(sub, "case.json"), "[]");
    const config = { file: join(sub, CONFIG_FILE_NAME), config: { model: "script:case.json" } };
    expect(resolveModel({}, {}, dir, config)).toEqual({ kind: "script", file: join(sub, "case.json"), source: "config" });
  });

  it("a missing script file or an empty script: is a usage error naming the file", () => {
    expect(() => resolveModel({ model: "script:nope.json" }, {}, dir)).toThrow(/nope\.json does not exist/);
    expect(() => resolveModel({ model: "script:" }, {}, dir)).toThrow(/must be followed by a file/);
  });

  it("a base URL that is not http(s) is a usage error naming where it came from", () => {
    expect(() => resolveModel({}, { OPENAI_BASE_URL: "localhost:11434" }, dir)).toThrow(/OPENAI_BASE_URL: "localhost:11434" is not an http\(s\) URL/);
    expect(() => resolveModel({ baseUrl: "ftp://x" }, {}, dir)).toThrow(/--base-url/);
  });
});

describe("loadConfigFile", () => {
  it("returns undefined when the folder has no config file", () => {
    expect(loadConfigFile(dir)).toBeUndefined();
  });

  it("reads every setting", () => {
    const config = {
      model: "m",
      baseUrl: "http://127.0.0.1:9/v1",
      maxTurns: 3,
      maxToolCalls: 5,
      timeout: 2.5,
      systemPrompt: "be brief",
      trace: false,
      permissions: { mode: "acceptEdits", allow: ["bash(npm test)"], ask: ["write_file"], deny: ["bash(rm *)"] },
    };
    writeConfig(config);
    expect(loadConfigFile(dir)).toEqual({ file: join(dir, CONFIG_FILE_NAME), config });
  });

  it.each([
    ["not JSON", "{nope", /is not valid JSON/],
    ["an array", "[]", /must hold a JSON object/],
    ["an unknown key", JSON.stringify({ modle: "x" }), /unknown setting "modle"/],
    ["an API key", JSON.stringify({ apiKey: "sk-x" }), /keep keys out of statecraft\.config\.json.*OPENAI_API_KEY/],
    ["a bad maxTurns", JSON.stringify({ maxTurns: 0 }), /"maxTurns" must be a whole number/],
    ["a fractional maxToolCalls", JSON.stringify({ maxToolCalls: 1.5 }), /"maxToolCalls" must be a whole number/],
    ["a bad timeout", JSON.stringify({ timeout: "10" }), /"timeout" must be a number of seconds/],
    ["a bad mode", JSON.stringify({ permissions: { mode: "yolo" } }), /"permissions.mode" must be one of "default", "acceptEdits", "bypassPermissions", "plan", got "yolo"/],
    ["bad rules", JSON.stringify({ permissions: { allow: "bash" } }), /"permissions.allow" must be a list of rules/],
    ["an unknown permission key", JSON.stringify({ permissions: { allowed: [] } }), /unknown setting "permissions.allowed"/],
  ])("rejects %s with a message naming the file", (_what, text, pattern) => {
    writeFileSync(join(dir, CONFIG_FILE_NAME), text);
    expect(() => loadConfigFile(dir)).toThrow(UsageError);
    expect(() => loadConfigFile(dir)).toThrow(pattern);
    expect(() => loadConfigFile(dir)).toThrow(join(dir, CONFIG_FILE_NAME));
  });
});

describe("resolveRunSettings", () => {
  it("combines flags over the config file, merging rule lists and converting seconds", () => {
    writeConfig({
      model: "cfg-model",
      maxTurns: 3,
      timeout: 10,
      systemPrompt: "cfg",
      trace: ".agent/traces/run.jsonl",
      permissions: { mode: "plan", allow: ["read_file"], deny: ["bash(rm *)"] },
    });
    const settings = resolveRunSettings(
      { cwd: ".", maxTurns: 5, timeout: 1.5, allow: ["bash(npm test)"], permissionMode: "acceptEdits", session: "s-1", trustProject: true },
      noUser,
      dir,
    );
    expect(settings).toEqual({
      cwd: dir,
      model: { kind: "openai", model: "cfg-model", source: "config" },
      maxTurns: 5,
      timeoutMs: 1500,
      systemPrompt: "cfg",
      sessionId: "s-1",
      traceFile: join(dir, ".agent/traces/run.jsonl"),
      permissions: { mode: "acceptEdits", allow: ["read_file", "bash(npm test)"], ask: [], deny: ["bash(rm *)"] },
      configFile: join(dir, CONFIG_FILE_NAME),
      // A model named with no server and no key would go to OpenAI's public endpoint (see the next test).
      warnings: [expect.stringMatching(/^warning: the model "cfg-model" will be asked for at OpenAI's public endpoint/)],
    });
  });

  it("warns when a model is named with neither OPENAI_BASE_URL nor OPENAI_API_KEY: it would go to OpenAI's public endpoint", () => {
    const { warnings } = resolveRunSettings({}, { ...noUser, STATECRAFT_MODEL: "qwen2.5:7b" }, dir);
    expect(warnings).toEqual([
      'warning: the model "qwen2.5:7b" will be asked for at OpenAI\'s public endpoint (https://api.openai.com/v1) without a key, since neither ' +
        "OPENAI_BASE_URL nor OPENAI_API_KEY is set. For a local server set OPENAI_BASE_URL (e.g. http://localhost:11434/v1) or --base-url; for OpenAI set OPENAI_API_KEY.",
    ]);
    expect(resolveRunSettings({ model: "qwen2.5:7b" }, noUser, dir).warnings).toHaveLength(1);
    expect(resolveRunSettings({}, { ...noUser, STATECRAFT_MODEL: "qwen2.5:7b", OPENAI_BASE_URL: "http://127.0.0.1:11434/v1" }, dir).warnings).toEqual([]);
    expect(resolveRunSettings({}, { ...noUser, STATECRAFT_MODEL: "gpt-4o", OPENAI_API_KEY: "sk-test" }, dir).warnings).toEqual([]);
    writeFileSync(join(dir, "case.json"), "[]");
    expect(resolveRunSettings({ model: "script:case.json" }, noUser, dir).warnings).toEqual([]);
  });

  it("reads the config file from --cwd, not from where the command runs", () => {
    const project = join(dir, "project");
    mkdirSync(project);
    writeConfig({ model: "in-project" }, project);
    expect(resolveRunSettings({ cwd: "project" }, noUser, dir).model).toMatchObject({ model: "in-project" });
    expect(() => resolveRunSettings({}, noUser, dir)).toThrow(UsageError);
  });

  it("--trace is resolved against the invocation folder and --no-trace turns the trace off", () => {
    const env = { ...noUser, STATECRAFT_MODEL: "m" };
    expect(resolveRunSettings({ trace: "t.jsonl" }, env, dir).traceFile).toBe(join(dir, "t.jsonl"));
    expect(resolveRunSettings({ trace: false }, env, dir).traceFile).toBe(false);
    expect(resolveRunSettings({}, env, dir).traceFile).toBeUndefined();
  });

  it("a --cwd that does not exist or is a file is a usage error", () => {
    writeFileSync(join(dir, "file.txt"), "x");
    expect(() => resolveRunSettings({ cwd: "missing" }, { ...noUser, STATECRAFT_MODEL: "m" }, dir)).toThrow(/--cwd: folder .*missing does not exist/);
    expect(() => resolveRunSettings({ cwd: "file.txt" }, { ...noUser, STATECRAFT_MODEL: "m" }, dir)).toThrow(/is not a folder/);
  });
});
