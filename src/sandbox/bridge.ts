/** The port the proxy is reached at inside the sandbox's own network namespace (nothing else listens there). */
export const BRIDGE_PORT = 3128;

/**
 * The program run first inside a sandbox with an allow-list: it listens on the namespace's loopback at BRIDGE_PORT,
 * joins each connection to the proxy's Unix socket (bound into the sandbox), and once listening runs the command
 * (argv: socket, program, its arguments…), passing on the signals it gets and ending with the command's status.
 * Node runs it (`node -e`), the same node as the engine: nothing more need be installed.
 */
export const BRIDGE_SOURCE = `
const net = require("node:net");
const { spawn } = require("node:child_process");
const [socket, file, ...args] = process.argv.slice(1);
const server = net.createServer((c) => {
  const u = net.connect(socket);
  c.pipe(u); u.pipe(c);
  c.on("error", () => u.destroy()); u.on("error", () => c.destroy());
  c.on("close", () => u.destroy()); u.on("close", () => c.destroy());
});
server.listen(${BRIDGE_PORT}, "127.0.0.1", () => {
  const child = spawn(file, args, { stdio: "inherit" });
  for (const s of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(s, () => child.kill(s));
  child.on("error", (e) => { process.stderr.write(String(e.message) + "\\n"); process.exit(127); });
  child.on("exit", (code, signal) => process.exit(code ?? 128 + (require("node:os").constants.signals[signal] ?? 0)));
});
server.on("error", (e) => { process.stderr.write("statecraft sandbox: the proxy bridge failed: " + e.message + "\\n"); process.exit(126); });
`;

/**
 * The same bridge made of socat, when the machine has it (Debian's `socat`): a few milliseconds to start where a
 * Node process takes tens (more under load), and nothing left between the command and its signals. A shell starts
 * socat detached (so it is the sandbox init's child, not the command's: a command waiting for all its children does
 * not wait for it), waits until the namespace's /proc/net/tcp shows it listening, then becomes the command.
 * argv: socat, socket, program, its arguments…
 */
export const SOCAT_BRIDGE_SCRIPT = `s=$1; u=$2; shift 2
( "$s" TCP-LISTEN:${BRIDGE_PORT},bind=127.0.0.1,fork,reuseaddr "UNIX-CONNECT:$u" </dev/null >/dev/null & )
listening() {
  while read -r _ local _ state _; do
    if [ "$local" = "0100007F:${BRIDGE_PORT.toString(16).toUpperCase().padStart(4, "0")}" ] && [ "$state" = 0A ]; then return 0; fi
  done </proc/net/tcp
  return 1
}
n=0
until listening; do
  n=$((n + 1))
  if [ "$n" -gt 200 ]; then sleep 0.01; fi
  if [ "$n" -gt 1200 ]; then echo "statecraft sandbox: the proxy bridge failed: socat did not listen on 127.0.0.1:${BRIDGE_PORT}" >&2; exit 126; fi
done
exec "$@"`;

/** Whether `socket` can be written in a socat address as it is (no `,` `:` `!` or spaces to escape). */
export const socatSafePath = (socket: string) => /^[A-Za-z0-9_./-]+$/.test(socket);

/** The variables that point HTTP clients, curl, git, npm, pip and SOCKS-aware tools at the bridge. */
export function proxyEnv(): Record<string, string> {
  const http = `http://127.0.0.1:${BRIDGE_PORT}`;
  const socks = `socks5h://127.0.0.1:${BRIDGE_PORT}`;
  return {
    HTTP_PROXY: http,
    HTTPS_PROXY: http,
    http_proxy: http,
    https_proxy: http,
    ALL_PROXY: socks,
    all_proxy: socks,
    NO_PROXY: "",
    no_proxy: "",
    npm_config_proxy: http,
    npm_config_https_proxy: http,
  };
}
