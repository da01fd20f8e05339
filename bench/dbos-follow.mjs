// What `statecraft inspect --database` costs PostgreSQL and how late it shows a line (docs/performance.md): not a
// timed test, a measurement.
//   catch-up   the lines already there (N, a quarter of them trace lines, as workers write them) read at start
//   idle poll  one read of the follower when nothing is new (and no id is missing), against a `SELECT 1` round trip on the same pool,
//              interleaved (a ratio, so the machine's load cancels out)
//   latency    from an insert's commit to the follower's delivery, polling every 250 ms (the default)
// Usage: npm run build && eval "$(scripts/postgres.sh start)" && node bench/dbos-follow.mjs [N=100000]
import pg from "pg";
import { followLines } from "../dist/dbos/follow.js";
import { closeClients } from "../dist/dbos/index.js";

const server = process.env.STATECRAFT_TEST_DATABASE_URL;
if (!server) {
  console.error('bench/dbos-follow.mjs needs a PostgreSQL: eval "$(scripts/postgres.sh start)" first (STATECRAFT_TEST_DATABASE_URL)');
  process.exit(2);
}
const N = Number(process.argv[2] ?? 100_000);
const name = `bench_${Math.random().toString(36).slice(2, 10)}`;
const admin = new pg.Client({ connectionString: server });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(server);
url.pathname = `/${name}`;
const database = url.toString();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const line = (i) => JSON.stringify({ v: 1, sessionId: `s${i % 500}`, seq: i, time: new Date().toISOString(), kind: "state", state: "call_model", turn: 1, details: { note: "x".repeat(120) } });

try {
  // Makes the tables, as any client's first call does.
  const first = followLines({ database, stream: "trace", onLines: () => {} });
  await first.ready;
  await first.stop();
  const pool = new pg.Pool({ connectionString: database, max: 2 });
  for (let at = 0; at < N; at += 5000) {
    const n = Math.min(5000, N - at);
    const ids = Array.from({ length: n }, (_, k) => at + k);
    await pool.query(
      `INSERT INTO statecraft.lines (session_id, run_id, part, stream, idx, line)
       SELECT 's' || (i % 500), 'r' || (i % 500), 0, (ARRAY['trace','transcript','audit','events'])[1 + i % 4], i, l FROM unnest($1::int[], $2::text[]) AS t(i, l)`,
      [ids, ids.map(line)],
    );
  }

  let delivered = 0;
  const arrivals = new Map();
  let started = performance.now();
  const following = followLines({
    database,
    stream: "trace",
    onLines(lines) {
      delivered += lines.length;
      for (const l of lines) if (l.startsWith('{"probe"')) arrivals.set(JSON.parse(l).probe, performance.now());
    },
  });
  await following.ready;
  const catchUpMs = performance.now() - started;

  // The follower's read when nothing is new, paired with a bare round trip.
  const poll = [];
  const trip = [];
  for (let i = 0; i < 200; i++) {
    started = performance.now();
    await pool.query("SELECT id, CASE WHEN stream = $1 THEN line END AS line FROM statecraft.lines WHERE id > $2 ORDER BY id LIMIT 5000", ["trace", 10 * N]);
    poll.push(performance.now() - started);
    started = performance.now();
    await pool.query("SELECT 1");
    trip.push(performance.now() - started);
  }

  const latency = [];
  for (let i = 0; i < 40; i++) {
    await pool.query("INSERT INTO statecraft.lines (session_id, run_id, part, stream, idx, line) VALUES ('probe', 'probe', 0, 'trace', $1, $2)", [i, JSON.stringify({ probe: i })]);
    const committed = performance.now();
    while (!arrivals.has(i)) await new Promise((r) => setTimeout(r, 5));
    latency.push(arrivals.get(i) - committed);
  }
  await following.stop();
  await pool.end();
  const load = (await import("node:os")).loadavg().map((x) => x.toFixed(2)).join(" ");
  console.log(JSON.stringify({ lines: N, traceLines: delivered - 40, catchUpMs: Math.round(catchUpMs), catchUpLinesPerS: Math.round(((delivered - 40) / catchUpMs) * 1000) }));
  console.log(JSON.stringify({ idlePollMs: +median(poll).toFixed(3), roundTripMs: +median(trip).toFixed(3), ratio: +(median(poll) / median(trip)).toFixed(2) }));
  console.log(JSON.stringify({ latencyMedianMs: Math.round(median(latency)), latencyMaxMs: Math.round(Math.max(...latency)), intervalMs: 250, load }));
} finally {
  await closeClients();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
