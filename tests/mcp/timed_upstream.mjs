// A raw JSON-RPC code-mode upstream whose timing and manners the test
// picks (tests/mcp/test_upstream_lifecycle.py), to make codecage's races
// wide and its failure paths certain. No SDK. Options:
//   --delay MS       `slow` answers MS ms after its request arrived
//   --deaf           after tools/list, never read stdin again (the pipe fills)
//   --flood-pings    after tools/list, send ping requests without end (and
//                    never read stdin again)
//   --exit-after-init  exit with status 3 once it read initialize
//   --once PATH      the same, but only when PATH exists (this run makes it):
//                    the first start works, every restart fails
//   --deep N         `deep` answers with a result nested N levels deep
//   --deep-list N    tools/list answers with a schema nested N levels deep
//   --pidfile PATH   write this process's pid there first
//   --countfile PATH after each tools/call, write there how many came
//   --http PORTFILE  streamable HTTP on 127.0.0.1 (the port written to
//                    PORTFILE) instead of stdio
// Tools: slow, count (tools/call requests received), drain (answers once
// every `slow` answer was written), deep, fds (what its descriptors are),
// echo.
import fs from "node:fs";
import http from "node:http";

const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  return i < 0 ? null : (argv[i + 1] ?? "");
};
const has = (name) => argv.includes(name);
const delay = Number(opt("--delay") ?? 0);
if (opt("--pidfile")) fs.writeFileSync(opt("--pidfile"), String(process.pid));
const once = opt("--once") !== null && fs.existsSync(opt("--once"));
if (opt("--once") !== null) fs.writeFileSync(opt("--once"), "started once");

const nest = (n, leaf) => {
  let v = leaf;
  for (let i = 0; i < n; i++) v = [v];
  return v;
};
const tools = ["slow", "count", "drain", "deep", "fds", "echo"].map((name) => ({
  name,
  description: `the ${name} tool`,
  inputSchema: { type: "object" },
}));
if (opt("--deep-list")) tools[0].inputSchema.properties = { x: nest(Number(opt("--deep-list")), 1) };

let calls = 0;
let waiting = 0; // `slow` answers not yet written
let drains = [];
const text = (v) => ({ content: [{ type: "text", text: JSON.stringify(v) }] });

// Answers one message; reply(obj) sends a response.
function handle(m, reply) {
  if (m.method === "initialize") {
    if (has("--exit-after-init") || once) process.exit(3);
    return reply({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "timed", version: "0" } } });
  }
  if (m.method === "tools/list") return reply({ jsonrpc: "2.0", id: m.id, result: { tools } });
  if (m.method !== "tools/call") return m.id === undefined ? undefined : reply(null);
  calls++;
  if (opt("--countfile")) fs.writeFileSync(opt("--countfile"), String(calls));
  const ok = (v) => reply({ jsonrpc: "2.0", id: m.id, result: text(v) });
  switch (m.params.name) {
    case "slow":
      waiting++;
      return setTimeout(() => {
        ok({ slow: true });
        if (--waiting === 0) for (const d of drains.splice(0)) d();
      }, delay);
    case "drain":
      if (waiting === 0) return ok({ drained: calls });
      return drains.push(() => ok({ drained: calls }));
    case "deep":
      return reply({ jsonrpc: "2.0", id: m.id, result: { content: [], structuredContent: { v: nest(Number(opt("--deep")), 1) } } });
    case "count":
      return ok({ calls, pid: process.pid });
    case "fds":
      return ok(fs.readdirSync("/proc/self/fd").map((fd) => {
        try { return fs.readlinkSync(`/proc/self/fd/${fd}`); } catch { return "?"; }
      }));
    default:
      return ok(m.params.arguments ?? {});
  }
}

const out = (m) => m && process.stdout.write(JSON.stringify(m) + "\n");

// Reads stdin a byte at a time until `count` lines came: nothing beyond
// them is taken from the pipe, so a deaf upstream leaves the rest there.
function readLinesSync(count, each) {
  const b = Buffer.alloc(1);
  let line = [];
  while (count > 0) {
    if (fs.readSync(0, b, 0, 1, null) !== 1) process.exit(0);
    if (b[0] !== 10) {
      line.push(b[0]);
      continue;
    }
    count--;
    const m = JSON.parse(Buffer.from(line).toString());
    line = [];
    each(m);
  }
}

if (opt("--http") !== null) {
  const srv = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const m = JSON.parse(body);
      if (m.id === undefined) {
        res.writeHead(202);
        return res.end();
      }
      handle(m, (r) => {
        res.writeHead(200, { "Content-Type": "application/json", "Mcp-Session-Id": "s1" });
        res.end(JSON.stringify(r));
      });
    });
  });
  srv.listen(0, "127.0.0.1", () => fs.writeFileSync(opt("--http"), String(srv.address().port)));
} else if (has("--deaf") || has("--flood-pings")) {
  // initialize, notifications/initialized, tools/list; then no more reads
  readLinesSync(3, (m) => handle(m, out));
  if (has("--flood-pings")) {
    let n = 0;
    const flood = () => {
      while (process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: `p${n++}`, method: "ping" }) + "\n"));
      process.stdout.once("drain", flood);
    };
    flood();
  }
  setInterval(() => {}, 1 << 30);
} else {
  let buf = "";
  process.stdin.on("data", (c) => {
    buf += c;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.trim()) handle(JSON.parse(line), out);
    }
  });
  process.stdin.on("end", () => process.exit(0));
}
