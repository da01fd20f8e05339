import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PROJECT_CONFIG_FILE, AGENT_DIR } from "../../src/tools/protected-paths.js";
import { PROJECT_MCP_FILE } from "../../src/cli/mcp-config.js";
import { bwrapArgs, hostAllowed, revealedTmp, isSecretVariable, PROTECTED_NAMES, resolveSandbox, sandboxLayout, sbplString, scrubEnvironment, seatbeltProfile } from "../../src/sandbox/index.js";
import { tempDir } from "./support.js";

describe("resolveSandbox", () => {
  it("takes the three modes and an object, with defaults", () => {
    expect(resolveSandbox(undefined)).toEqual({ mode: "auto", network: "none", hide: [], env: { pass: [], set: {} } });
    expect(resolveSandbox("required").mode).toBe("required");
    expect(resolveSandbox("off").mode).toBe("off");
    expect(resolveSandbox({ network: { allow: ["registry.npmjs.org", "127.0.0.1:5432", "*.github.com", "[::1]:8080"] }, hide: ["~/secrets"], env: { pass: ["GITHUB_TOKEN"], set: { CI: "1" } } })).toEqual({
      mode: "auto",
      network: { allow: ["registry.npmjs.org", "127.0.0.1:5432", "*.github.com", "[::1]:8080"] },
      hide: ["~/secrets"],
      env: { pass: ["GITHUB_TOKEN"], set: { CI: "1" } },
    });
    expect(resolveSandbox({ mode: "required", network: "host" })).toMatchObject({ mode: "required", network: "host" });
  });

  it.each([
    ["strict", /options\.sandbox is "strict"; it takes "auto", "required", "off" or/],
    [true, /options\.sandbox is true/],
    [{ mode: "on" }, /options\.sandbox\.mode is "on"/],
    [{ netwrok: "host" }, /options\.sandbox\.netwrok is not a setting/],
    [{ network: "all" }, /options\.sandbox\.network is "all"/],
    [{ network: { allow: "npmjs.org" } }, /options\.sandbox\.network is/],
    [{ network: { allow: ["http://x.org"] } }, /network\.allow has "http:\/\/x\.org", which is no host/],
    [{ network: { allow: ["x.org:99999"] } }, /port is out of range/],
    [{ hide: "~/.ssh" }, /hide must be an array of non-empty strings/],
    [{ env: { pass: ["A B"] } }, /env\.pass has "A B", which is no variable name/],
    [{ env: { set: { X: 1 } } }, /env\.set\.X must be a string/],
    [{ env: { keep: [] } }, /env\.keep is not a setting/],
  ])("refuses %j, saying what it takes", (option, message) => {
    expect(() => resolveSandbox(option)).toThrow(message);
    try {
      resolveSandbox(option);
    } catch (error) {
      expect((error as { code: string }).code).toBe("INVALID_OPTIONS");
    }
  });
});

describe("the environment scrub", () => {
  it("drops what names a key, token, secret, password or credential, URLs with credentials and the listed families", () => {
    const dropped = [
      "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "GITHUB_TOKEN",
      "NPM_TOKEN", "DB_PASSWORD", "MYSQL_PWD", "SLACK_SIGNING_SECRET", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_AUTH_SOCK", "STATECRAFT_HOME",
      "STATECRAFT_RUN_KEY", "STATECRAFT_DATABASE_URL", "DBOS_SYSTEM_DATABASE_URL", "PGPASSWORD", "PGHOST", "AZURE_OPENAI_ENDPOINT", "HF_TOKEN",
      "npm_config__authToken", "PRIVATE_KEY_PATH", "DOCKER_AUTH_CONFIG",
    ];
    for (const name of dropped) expect(isSecretVariable(name, "x"), name).toBe(true);
    for (const value of ["postgres://u:pw@h/db", "https://ghp_abc@github.com/o/r.git", "redis://:pw@cache:6379", "a,mysql://root:root@db/x"]) {
      expect(isSecretVariable("SOME_SETTING", value), value).toBe(true);
    }
    for (const name of ["PATH", "HOME", "LANG", "TERM", "PWD", "SHELL", "USER", "NODE_ENV", "CI", "EDITOR", "TMPDIR"]) expect(isSecretVariable(name, "/usr/bin"), name).toBe(false);
    expect(isSecretVariable("SITE", "https://example.com/path")).toBe(false);
  });

  it("keeps what pass names and sets what set gives, without changing its input", () => {
    const base = { PATH: "/bin", GITHUB_TOKEN: "t", OPENAI_API_KEY: "k", URL: "https://u:p@h" };
    expect(scrubEnvironment(base, { pass: ["GITHUB_TOKEN"], set: { CI: "1" } })).toEqual({ PATH: "/bin", GITHUB_TOKEN: "t", CI: "1" });
    expect(base).toHaveProperty("OPENAI_API_KEY");
  });
});

describe("sandbox.network.allow", () => {
  it("matches hosts, ports and subdomain patterns exactly", () => {
    const allow = ["registry.npmjs.org", "127.0.0.1:5432", "*.github.com", "[::1]:8080"];
    expect(hostAllowed(allow, "registry.npmjs.org", 443)).toBe(true);
    expect(hostAllowed(allow, "REGISTRY.npmjs.org.", 80)).toBe(true);
    expect(hostAllowed(allow, "127.0.0.1", 5432)).toBe(true);
    expect(hostAllowed(allow, "api.github.com", 443)).toBe(true);
    expect(hostAllowed(allow, "[::1]", 8080)).toBe(true);
    for (const [host, port] of [
      ["127.0.0.1", 5433],
      ["localhost", 5432],
      ["github.com", 443],
      ["evilgithub.com", 443],
      ["github.com.evil.org", 443],
      ["registry.npmjs.org.evil.org", 443],
      ["npmjs.org", 443],
      ["::1", 8081],
    ] as const) {
      expect(hostAllowed(allow, host, port), `${host}:${port}`).toBe(false);
    }
  });
});

describe("the layout both platforms share", () => {
  let ws: string;
  let home: string;
  beforeEach(() => {
    ws = tempDir("statecraft-layout-ws-");
    home = tempDir("statecraft-layout-home-");
  });
  afterEach(() => {
    fs.rmSync(ws, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  });

  it("protects the names the permission layer protects", () => {
    expect(PROTECTED_NAMES.map((p) => p.name)).toEqual([AGENT_DIR, PROJECT_CONFIG_FILE, PROJECT_MCP_FILE]);
  });

  it("writes the workspace and additional folders, keeps protected paths read-only, hides credentials and the statecraft folder", () => {
    const extra = tempDir("statecraft-layout-extra-");
    fs.mkdirSync(path.join(ws, ".agent"));
    fs.mkdirSync(path.join(home, ".ssh"));
    fs.writeFileSync(path.join(home, ".netrc"), "x");
    fs.mkdirSync(path.join(home, "sc"));
    fs.mkdirSync(path.join(home, "private"));
    try {
      const layout = sandboxLayout({ workspace: ws, additional: [extra, "missing-folder"], hide: ["~/private"], env: { HOME: home, STATECRAFT_HOME: path.join(home, "sc") } });
      expect(layout.writable).toEqual([ws, extra]);
      expect(layout.readOnly).toEqual([path.join(ws, ".agent")]);
      expect(layout.missingProtected).toEqual([
        { path: path.join(ws, "statecraft.config.json"), kind: "file" },
        { path: path.join(ws, ".mcp.json"), kind: "file" },
        { path: path.join(extra, ".agent"), kind: "dir" },
        { path: path.join(extra, "statecraft.config.json"), kind: "file" },
        { path: path.join(extra, ".mcp.json"), kind: "file" },
      ]);
      expect(layout.hidden).toEqual([
        { path: path.join(home, "sc"), kind: "dir" },
        { path: path.join(home, ".ssh"), kind: "dir" },
        { path: path.join(home, ".netrc"), kind: "file" },
        { path: path.join(home, "private"), kind: "dir" },
      ]);
    } finally {
      fs.rmSync(extra, { recursive: true, force: true });
    }
  });

  it("shows read-only the first-level entries of /tmp that hold what the process runs, and nothing else of /tmp", () => {
    const project = fs.mkdtempSync("/tmp/statecraft-reveal-");
    try {
      fs.mkdirSync(path.join(project, "node_modules", "x"), { recursive: true });
      fs.writeFileSync(path.join(project, "node_modules", "x", "index.js"), "");
      const script = path.join(project, "node_modules", "x", "index.js");
      expect(revealedTmp([script, "-e", "relative/path", "/usr/bin/env", "/tmp/statecraft-no-such-thing", path.join(project, "node_modules")])).toEqual([project]);
      expect(sandboxLayout({ workspace: ws, env: { HOME: home }, runs: [process.execPath, script] }).revealedTmp).toEqual([project]);
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });

  it("hides a credential folder reached through a symlink at its real place", () => {
    const real = tempDir("statecraft-layout-real-");
    fs.symlinkSync(real, path.join(home, ".aws"));
    try {
      const layout = sandboxLayout({ workspace: ws, env: { HOME: home, STATECRAFT_HOME: path.join(home, "none") } });
      expect(layout.hidden).toEqual([{ path: real, kind: "dir" }]);
    } finally {
      fs.rmSync(real, { recursive: true, force: true });
    }
  });

  it("bubblewrap: read-only root, then the writable roots, then protected paths, then hidden ones; capabilities dropped", () => {
    const layout = { writable: ["/w"], readOnly: ["/w/.agent"], missingProtected: [{ path: "/w/.mcp.json", kind: "file" as const }], hidden: [{ path: "/h/.ssh", kind: "dir" as const }, { path: "/h/.netrc", kind: "file" as const }], revealedTmp: ["/tmp/project"], cwd: "/w/sub" };
    const args = bwrapArgs({ layout, hostNetwork: false });
    expect(args.join(" ")).toBe(
      "--die-with-parent --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try --unshare-net --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --ro-bind /tmp/project /tmp/project " +
        "--bind /w /w --ro-bind /w/.agent /w/.agent --ro-bind /w/.mcp.json /w/.mcp.json --tmpfs /h/.ssh --remount-ro /h/.ssh --ro-bind /dev/null /h/.netrc " +
        "--cap-drop ALL --chdir /w/sub --",
    );
    expect(bwrapArgs({ layout, hostNetwork: true })).not.toContain("--unshare-net");
    expect(bwrapArgs({ layout, hostNetwork: false, proxySocket: "/tmp/x/proxy.sock", newSession: true }).join(" ")).toContain("--new-session");
    expect(bwrapArgs({ layout, hostNetwork: false, proxySocket: "/tmp/x/proxy.sock" }).join(" ")).toContain("--ro-bind /tmp/x/proxy.sock /tmp/x/proxy.sock");
  });
});

describe("the macOS sandbox-exec profile", () => {
  const layout = {
    writable: ["/Users/me/project", "/Users/me/shared"],
    readOnly: ["/Users/me/project/.agent", "/Users/me/project/statecraft.config.json"],
    missingProtected: [{ path: "/Users/me/project/.mcp.json", kind: "file" as const }],
    hidden: [
      { path: "/Users/me/.ssh", kind: "dir" as const },
      { path: "/Users/me/.netrc", kind: "file" as const },
      { path: '/Users/me/we"ird\\dir', kind: "dir" as const },
    ],
    cwd: "/Users/me/project",
  };

  it("denies by default, reads all, writes the roots and its temp folder, denies protected writes and hidden reads after", () => {
    const profile = seatbeltProfile({ layout, hostNetwork: false, tmp: "/private/var/folders/x/T/statecraft-sandbox-1/tmp" });
    const lines = profile.trim().split("\n");
    expect(lines[0]).toBe("(version 1)");
    expect(lines[1]).toBe("(deny default)");
    expect(lines).toContain("(allow file-read*)");
    const write = lines.find((l) => l.startsWith("(allow file-write*"))!;
    expect(write).toContain('(subpath "/Users/me/project")');
    expect(write).toContain('(subpath "/Users/me/shared")');
    expect(write).toContain('(subpath "/private/var/folders/x/T/statecraft-sandbox-1/tmp")');
    expect(write).not.toContain('"/Users/me")');
    const protectedLine = lines.findIndex((l) => l.startsWith("(deny file-write*"));
    const hiddenLine = lines.findIndex((l) => l.startsWith("(deny file-read* file-write*"));
    // SBPL: the last matching rule wins, so the denials come after the allows.
    expect(protectedLine).toBeGreaterThan(lines.indexOf(write));
    for (const p of ["/Users/me/project/.agent", "/Users/me/project/statecraft.config.json", "/Users/me/project/.mcp.json"]) {
      expect(lines[protectedLine]).toContain(`(literal "${p}")`);
      expect(lines[protectedLine]).toContain(`(subpath "${p}")`);
    }
    expect(lines[hiddenLine]).toContain('(subpath "/Users/me/.ssh")');
    expect(lines[hiddenLine]).toContain('(literal "/Users/me/.netrc")');
    expect(lines[hiddenLine]).toContain('(subpath "/Users/me/we\\"ird\\\\dir")');
    expect(hiddenLine).toBeGreaterThan(lines.findIndex((l) => l === "(allow file-read*)"));
    expect(profile).not.toContain("network");
  });

  it("network: host allows it all; an allow-list allows only the proxy's port", () => {
    expect(seatbeltProfile({ layout, hostNetwork: true, tmp: "/t" })).toContain("(allow network*)");
    const proxied = seatbeltProfile({ layout, hostNetwork: false, tmp: "/t", proxyPort: 3128 });
    expect(proxied).toContain('(allow network-outbound (remote tcp "localhost:3128"))');
    expect(proxied).not.toContain("(allow network*)");
  });

  it("escapes SBPL strings", () => {
    expect(sbplString('a"b\\c')).toBe('"a\\"b\\\\c"');
  });
});
