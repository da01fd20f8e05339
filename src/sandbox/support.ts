import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/** How this machine sandboxes a process, or why it cannot and what would fix it. */
export type SandboxSupport =
  | { kind: "bwrap"; program: string }
  | { kind: "seatbelt"; program: string }
  | { kind: "none"; reason: string; fix: string };

const SEATBELT = "/usr/bin/sandbox-exec";
const cache = new Map<string, SandboxSupport>();

export function findOnPath(name: string, pathVariable: string | undefined): string | undefined {
  for (const dir of (pathVariable ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Whether bubblewrap (Linux) or sandbox-exec (macOS) can sandbox a process here. bubblewrap is tried once (per PATH)
 * with the namespaces a sandbox uses: a kernel or container that forbids them is found now, not at the first call.
 */
export function sandboxSupport(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): SandboxSupport {
  const key = `${platform}\0${env.PATH ?? ""}`;
  const known = cache.get(key);
  if (known) return known;
  const found = detect(env, platform);
  cache.set(key, found);
  return found;
}

function detect(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): SandboxSupport {
  if (platform === "darwin") {
    if (fs.existsSync(SEATBELT)) return { kind: "seatbelt", program: SEATBELT };
    return { kind: "none", reason: `${SEATBELT} is missing`, fix: "use a macOS that ships sandbox-exec, or set sandbox: \"off\"" };
  }
  if (platform !== "linux") {
    return { kind: "none", reason: `statecraft has no sandbox for ${platform}`, fix: "run on Linux (bubblewrap) or macOS (sandbox-exec), or set sandbox: \"off\"" };
  }
  const program = findOnPath("bwrap", env.PATH);
  if (program === undefined) {
    return { kind: "none", reason: "bubblewrap (bwrap) is not installed", fix: "install it: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora), apk add bubblewrap (Alpine)" };
  }
  const { spawnSync } = createRequire(import.meta.url)("node:child_process") as typeof import("node:child_process");
  const probe = spawnSync(program, ["--die-with-parent", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--cap-drop", "ALL", "--", "true"], {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10_000,
  });
  if (probe.status === 0) return { kind: "bwrap", program };
  const said = probe.error?.message ?? probe.stderr?.toString("utf8").trim() ?? `exit ${probe.status}`;
  return {
    kind: "none",
    reason: `bubblewrap (${program}) cannot make a sandbox here: ${said}`,
    fix: "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0), or in a container run it with --security-opt seccomp=unconfined or as a privileged one",
  };
}
