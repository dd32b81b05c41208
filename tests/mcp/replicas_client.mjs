// Sessions through a router with the official MCP TypeScript SDK, for
// test_replicas.py. usage: node replicas_client.mjs URL N
// Opens N sessions at once, each sets x = its index in Python; prints one
// JSON line {"sessions": [ids]} and waits for a line on stdin (the test
// kills a replica meanwhile); then every session reads x back. A session
// whose call fails with HTTP 404 re-initializes (a new client) and goes on.
// Prints one JSON line {"results": [{before, status, value, retried, id}]}.
import readline from "node:readline";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, n] = [process.argv[2], Number(process.argv[3])];

async function open() {
  const client = new Client({ name: "codecage-replicas-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

function value(r) {
  return r.structuredContent.value;
}

const sessions = await Promise.all(
  Array.from({ length: n }, async (_, i) => {
    const s = await open();
    const r = await s.client.callTool({ name: "run_python", arguments: { code: `x = ${i}; x` } });
    if (value(r) !== i) throw new Error(`session ${i}: ${JSON.stringify(r)}`);
    return s;
  }),
);
console.log(JSON.stringify({ sessions: sessions.map((s) => s.transport.sessionId) }));

const rl = readline.createInterface({ input: process.stdin });
await new Promise((resolve) => rl.once("line", resolve));
rl.close();

const results = await Promise.all(
  sessions.map(async (s, i) => {
    const out = { before: s.transport.sessionId, retried: false };
    try {
      const r = await s.client.callTool({ name: "run_python", arguments: { code: "x" } });
      out.status = 200;
      out.value = value(r);
    } catch (e) {
      out.status = e.code ?? String(e);
      // the spec: a 404 for a session id means start a new session
      const t = await open();
      const r = await t.client.callTool({ name: "run_python", arguments: { code: `x = ${i}; x` } });
      out.retried = true;
      out.value = value(r);
      out.id = t.transport.sessionId;
      await t.client.close();
    }
    await s.client.close().catch(() => {});
    return out;
  }),
);
console.log(JSON.stringify({ results }));
process.exit(0);
