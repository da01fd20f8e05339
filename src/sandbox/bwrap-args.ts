import type { SandboxLayout } from "./layout.js";

export interface BwrapPlan {
  layout: SandboxLayout;
  /** `false`: the process gets a network namespace of its own (only its own loopback). */
  hostNetwork: boolean;
  /** A Unix socket bound into the sandbox at the same path (the allow-list proxy's). */
  proxySocket?: string;
  /** Start a session of its own (a process not already made a session leader by its caller, e.g. an MCP server). */
  newSession?: boolean;
  /** A file descriptor bubblewrap writes `{ "child-pid": … }` to: the sandbox's init, as this PID namespace sees it. */
  infoFd?: number;
}

/**
 * bubblewrap's arguments, in mount order (a later mount covers an earlier one): the whole file system read-only, a
 * fresh /dev, a /proc of the process's own PID namespace, a private /tmp (what the process runs from it shown
 * read-only), the writable roots, their protected paths read-only again, then the hidden paths covered. Capabilities are dropped, so even root inside cannot unmount them.
 */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const { layout } = plan;
  const args = ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
  if (!plan.hostNetwork) args.push("--unshare-net");
  if (plan.newSession) args.push("--new-session");
  if (plan.infoFd !== undefined) args.push("--info-fd", String(plan.infoFd));
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
  for (const entry of layout.revealedTmp) args.push("--ro-bind", entry, entry);
  for (const root of layout.writable) args.push("--bind", root, root);
  for (const p of layout.readOnly) args.push("--ro-bind", p, p);
  for (const { path } of layout.missingProtected) args.push("--ro-bind", path, path);
  if (plan.proxySocket !== undefined) args.push("--ro-bind", plan.proxySocket, plan.proxySocket);
  for (const { path, kind } of layout.hidden) {
    if (kind === "dir") args.push("--tmpfs", path, "--remount-ro", path);
    else args.push("--ro-bind", "/dev/null", path);
  }
  args.push("--cap-drop", "ALL", "--chdir", layout.cwd, "--");
  return args;
}
