import type { SandboxLayout } from "./layout.js";

export interface SeatbeltPlan {
  layout: SandboxLayout;
  hostNetwork: boolean;
  /** The allow-list proxy's port on 127.0.0.1 (macOS has no network namespace: the profile lets only it be reached). */
  proxyPort?: number;
  /** The process's private temporary folder (it gets TMPDIR pointing there). */
  tmp: string;
}

/** A string literal of SBPL (Scheme): backslashes and quotes escaped. */
export function sbplString(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

const subpath = (p: string) => `(subpath ${sbplString(p)})`;
const literal = (p: string) => `(literal ${sbplString(p)})`;
const target = (entry: { path: string; kind: "dir" | "file" }) => (entry.kind === "dir" ? subpath(entry.path) : literal(entry.path));

/**
 * The `sandbox-exec -p` profile of the same layout as bubblewrap's: reads everywhere but the hidden paths, writes
 * only in the writable roots (less their protected paths), the private temporary folder and the terminal devices,
 * network off, to any host, or only to the proxy. SBPL's later rules win over earlier ones, so denials come last.
 */
export function seatbeltProfile(plan: SeatbeltPlan): string {
  const { layout } = plan;
  const lines = [
    "(version 1)",
    "(deny default)",
    "(allow process-exec)",
    "(allow process-fork)",
    "(allow signal (target same-sandbox))",
    "(allow sysctl-read)",
    "(allow mach-lookup)",
    "(allow ipc-posix-shm)",
    "(allow iokit-open)",
    "(allow file-read*)",
    `(allow file-write* ${[...layout.writable.map(subpath), subpath(plan.tmp), literal("/dev/null"), literal("/dev/zero"), literal("/dev/tty"), "(regex #\"^/dev/fd/\")"].join(" ")})`,
    "(allow file-ioctl (regex #\"^/dev/tty\"))",
  ];
  const protectedPaths = [...layout.readOnly.map((p) => ({ path: p, kind: "dir" as const })), ...layout.missingProtected];
  if (protectedPaths.length > 0) {
    // A protected path that is a file is matched as a literal and, were it a folder, as a subpath: both are denied.
    lines.push(`(deny file-write* ${protectedPaths.flatMap((p) => [literal(p.path), subpath(p.path)]).join(" ")})`);
  }
  if (layout.hidden.length > 0) lines.push(`(deny file-read* file-write* ${layout.hidden.map(target).join(" ")})`);
  if (plan.hostNetwork) lines.push("(allow network*)");
  else if (plan.proxyPort !== undefined) lines.push(`(allow network-outbound (remote tcp ${sbplString(`localhost:${plan.proxyPort}`)}))`);
  return `${lines.join("\n")}\n`;
}
