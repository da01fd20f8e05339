// What each of bubblewrap's flags costs (docs/sandbox.md, "What a sandboxed process costs"): `bash -c true` under the
// sandbox's arguments less one thing at a time, each paired with a plain `bash -c true` started just before it, so
// the difference holds under load. "exit" is when bubblewrap exits; "gone" when the last process of its group has
// (the sandbox's teardown included). Linux, bubblewrap on PATH. Usage: node bench/sandbox-flags.mjs [rounds=40] [variant…]
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
const W = fs.realpathSync(fs.mkdtempSync(path.join(os.homedir(), ".statecraft-bench-flags-")));
fs.mkdirSync(W + "/.agent", { recursive: true });
fs.writeFileSync(W + "/statecraft.config.json", "");
fs.writeFileSync(W + "/.mcp.json", "");
const home = os.homedir();
// Two hidden paths as the sandbox hides them (a folder, a file), where they exist here.
const hides = [
  ...(fs.existsSync(home + "/.config/statecraft") ? ["--tmpfs", home + "/.config/statecraft", "--remount-ro", home + "/.config/statecraft"] : []),
  ...(fs.existsSync(home + "/.npmrc") ? ["--ro-bind", "/dev/null", home + "/.npmrc"] : []),
];
const base = ["--die-with-parent","--unshare-pid","--unshare-ipc","--unshare-uts","--unshare-cgroup-try","--unshare-net","--ro-bind","/","/","--dev","/dev","--proc","/proc","--tmpfs","/tmp","--bind",W,W,
 "--ro-bind",W+"/.agent",W+"/.agent","--ro-bind",W+"/statecraft.config.json",W+"/statecraft.config.json","--ro-bind",W+"/.mcp.json",W+"/.mcp.json",...hides,
 "--cap-drop","ALL","--chdir",W];
const drop = (flags, n = 0) => { const a = [...base]; for (const f of flags) { const i = a.indexOf(f); a.splice(i, 1 + n); } return a; };
const variants = {
  full: base,
  nonet: drop(["--unshare-net"]),
  noipcutscg: drop(["--unshare-ipc","--unshare-uts","--unshare-cgroup-try"]),
  nodwp: drop(["--die-with-parent"]),
  fewmounts: [...base.slice(0, base.indexOf("--ro-bind", base.indexOf(W))), "--cap-drop","ALL","--chdir",W],
  noproc: drop(["--proc"], 1),
};
const groupAlive = (pgid) => {
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    let s; try { s = fs.readFileSync(`/proc/${pid}/stat`, "utf8"); } catch { continue; }
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    if (Number(f[2]) === pgid && f[0] !== "Z" && f[0] !== "X") return true;
  }
  return false;
};
const once = (file, args) => new Promise((res) => {
  const t0 = performance.now();
  const c = spawn(file, args, { detached: true, stdio: "ignore" });
  c.on("exit", () => { const t1 = performance.now(); const poll = () => { if (groupAlive(c.pid)) return setImmediate(poll); res([t1 - t0, performance.now() - t0]); }; poll(); });
});
const names = process.argv.slice(3).length ? process.argv.slice(3) : Object.keys(variants);
const N = Number(process.argv[2] ?? 40);
const med = (xs) => [...xs].sort((a,b)=>a-b)[Math.floor(xs.length/2)];
const r = Object.fromEntries(names.map((n) => [n, { exit: [], gone: [] }]));
const l0 = os.loadavg()[0];
for (let i = 0; i < N; i++) {
  const order = i % 2 ? [...names].reverse() : names;
  const [pe, pg] = await once("/bin/bash", ["-c", "true"]);
  for (const n of order) { const [e, g] = await once("bwrap", [...variants[n], "--", "/bin/bash", "-c", "true"]); r[n].exit.push(e - pe); r[n].gone.push(g - pg); }
}
for (const n of names) console.log(n.padEnd(12), "added@exit", med(r[n].exit).toFixed(1), "added@gone", med(r[n].gone).toFixed(1));
console.log("load", l0, os.loadavg()[0]);
fs.rmSync(W, { recursive: true, force: true });
