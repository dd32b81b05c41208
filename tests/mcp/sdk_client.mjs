// Drives `codecage mcp` with the official MCP TypeScript SDK (a client no one
// here wrote), over stdio or streamable HTTP. tests/mcp/test_sdk.py runs it.
//
// usage: node sdk_client.mjs stdio CODECAGE [FLAGS...]
//        node sdk_client.mjs http URL          (a server already listening)
// Prints "ok NAME" or "FAIL NAME: why" per check and ends with
// "N passed, M failed"; exit status 1 when anything failed.
import assert from "node:assert/strict";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const [mode, target, ...flags] = process.argv.slice(2);
let passed = 0;
let failed = 0;

async function check(name, fn) {
  try {
    const t0 = Date.now();
    await fn();
    passed++;
    console.log(`ok ${name}` + (process.env.SDK_TEST_TIMES ? ` (${Date.now() - t0} ms)` : ""));
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
  }
}

async function connect() {
  const client = new Client({ name: "codecage-sdk-test", version: "1.0.0" });
  const transport =
    mode === "stdio"
      ? new StdioClientTransport({ command: target, args: ["mcp", ...flags], stderr: "inherit" })
      : new StreamableHTTPClientTransport(new URL(target));
  await client.connect(transport);
  return { client, transport };
}

const py = (client, code, extra = {}, options = {}) =>
  client.callTool({ name: "run_python", arguments: { code, ...extra } }, undefined, options);
const js = (client, code, extra = {}, options = {}) =>
  client.callTool({ name: "run_javascript", arguments: { code, ...extra } }, undefined, options);

async function main() {
  const { client, transport } = await connect();
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));

  await check("initialize: server info, capabilities, instructions", async () => {
    assert.equal(client.getServerVersion().name, "codecage");
    const caps = client.getServerCapabilities();
    assert.ok(caps.tools, "tools capability");
    assert.ok(caps.logging, "logging capability");
    assert.ok(caps.resources, "resources capability");
    assert.match(client.getInstructions(), /run_python/);
    if (mode === "http") assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
  });

  await check("ping", async () => {
    assert.deepEqual(await client.ping(), {});
  });

  await check("tools/list: both tools with schemas and usable descriptions", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["run_javascript", "run_python"]);
    for (const t of tools) {
      assert.deepEqual(t.inputSchema.required, ["code"]);
      assert.ok(t.inputSchema.properties.timeout_s && t.inputSchema.properties.reset);
      assert.deepEqual(t.outputSchema.required.sort(),
        ["duration_ms", "error", "status", "stderr", "stdout", "value"]);
      assert.match(t.description, /last expression|ending the code with an expression/);
      assert.match(t.description, /reset: true/);
      assert.match(t.description, /Limits:/);
    }
  });

  await check("run_python: value, stdout, text block", async () => {
    const r = await py(client, "print('hello')\n6 * 7");
    assert.equal(r.isError, false);
    assert.equal(r.structuredContent.status, "ok");
    assert.equal(r.structuredContent.value, 42);
    assert.equal(r.structuredContent.stdout, "hello\n");
    assert.equal(r.structuredContent.error, null);
    assert.equal(r.content[0].type, "text");
    assert.equal(r.content[0].text, "status: ok\nvalue: 42\nstdout:\nhello\n");
  });

  await check("run_javascript: value, console.log, console.error", async () => {
    const r = await js(client, "console.log('a'); console.error('b'); [1, 'x', {k: null}]");
    assert.equal(r.isError, false);
    assert.deepEqual(r.structuredContent.value, [1, "x", { k: null }]);
    assert.equal(r.structuredContent.stdout, "a\n");
    assert.equal(r.structuredContent.stderr, "b\n");
  });

  await check("tagged values (NaN, bigint, bytes) as the CLI's --json", async () => {
    const r = await py(client, "[float('nan'), 2**70, b'hi']");
    assert.deepEqual(r.structuredContent.value,
      [{ $float: "NaN" }, { $bigint: "1180591620717411303424" }, { $bytes: "aGk=" }]);
  });

  await check("state persists across calls (python and javascript)", async () => {
    await py(client, "import math\nx = 21");
    const r = await py(client, "x * 2 + int(math.sqrt(0))");
    assert.equal(r.structuredContent.value, 42);
    await js(client, "let counter = 1; globalThis.g = 10;");
    await js(client, "counter += 1");
    const r2 = await js(client, "counter + g");
    assert.equal(r2.structuredContent.value, 12);
  });

  await check("files in, changed files out, resources/list and resources/read", async () => {
    const r = await js(client,
      "fs.writeFileSync('/tmp/out.txt', fs.readFileSync('/tmp/in.txt', 'utf8').toUpperCase()); 1",
      { files: { "in.txt": "abc" } });
    assert.equal(r.isError, false);
    assert.deepEqual(r.structuredContent.files.map((f) => f.path), ["/tmp/in.txt", "/tmp/out.txt"]);
    const { resources } = await client.listResources();
    assert.ok(resources.some((x) => x.uri === "codecage://javascript/tmp/out.txt"));
    const { contents } = await client.readResource({ uri: "codecage://javascript/tmp/out.txt" });
    assert.equal(contents[0].text, "ABC");
  });

  await check("reset: true discards state", async () => {
    await py(client, "y = 5");
    const r = await py(client, "y", { reset: true });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.type, "NameError");
    assert.match(r.structuredContent.note, /reset/);
  });

  await check("guest errors: isError, type, message, guest traceback", async () => {
    const r = await py(client, "def f():\n    return 1/0\nf()");
    assert.equal(r.isError, true);
    const e = r.structuredContent.error;
    assert.equal(e.kind, "guest_error");
    assert.equal(e.type, "ZeroDivisionError");
    assert.equal(e.message, "division by zero");
    assert.match(e.traceback, /line 2, in f/);
    assert.match(r.content[0].text, /^status: error \(guest_error\)\nerror: ZeroDivisionError/);
    const r2 = await js(client, "throw new RangeError('too far')");
    assert.equal(r2.isError, true);
    assert.equal(r2.structuredContent.error.type, "RangeError");
    assert.equal(r2.structuredContent.error.message, "too far");
  });

  await check("syntax errors", async () => {
    const r = await py(client, "def (");
    assert.equal(r.structuredContent.error.kind, "syntax_error");
    const r2 = await js(client, "let = ;");
    assert.equal(r2.structuredContent.error.kind, "syntax_error");
  });

  await check("timeouts (timeout_s), then the runtime works again", async () => {
    const r = await py(client, "while True:\n    pass", { timeout_s: 1 });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.kind, "timeout");
    const r2 = await js(client, "for (;;) {}", { timeout_s: 1 });
    assert.equal(r2.structuredContent.error.kind, "timeout");
    const r3 = await py(client, "1 + 1");
    assert.equal(r3.structuredContent.value, 2);
  });

  await check("a crashed runtime is replaced on the next call, with a note", async () => {
    await py(client, "before = 1");
    const r = await py(client, "import os\nos.abort()");
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.kind, "worker_crashed");
    const r2 = await py(client, "'before' in globals()");
    assert.equal(r2.isError, false);
    assert.equal(r2.structuredContent.value, false);
    assert.match(r2.structuredContent.note, /previous python runtime ended \(worker_crashed/);
    assert.match(r2.content[0].text, /^note: the previous python runtime ended/);
  });

  await check("cancellation stops the running code", async () => {
    await js(client, "globalThis.kept = 1");
    const ac = new AbortController();
    const started = js(client, "for (;;) {}", { timeout_s: 25 }, { signal: ac.signal });
    setTimeout(() => ac.abort("changed my mind"), 500);
    await assert.rejects(started);
    // The next call waits for the cancelled one to end: it only answers
    // now if the server stopped the loop (its deadline is 25 s away, and
    // the SDK's request timeout below is 15 s).
    const r = await js(client, "typeof kept", {}, { timeout: 15000 });
    assert.equal(r.structuredContent.value, "undefined");
    assert.match(r.structuredContent.note, /cancelled/);
  });

  await check("unknown tool and bad arguments are JSON-RPC errors", async () => {
    await assert.rejects(client.callTool({ name: "run_cobol", arguments: { code: "" } }),
      (e) => e instanceof McpError && e.code === -32602 && /unknown tool/.test(e.message));
    await assert.rejects(client.callTool({ name: "run_python", arguments: { code: 42 } }),
      (e) => e instanceof McpError && e.code === -32602 && /code must be a string/.test(e.message));
    await assert.rejects(client.callTool({ name: "run_python", arguments: { code: "1", timeout_s: -1 } }),
      (e) => e instanceof McpError && e.code === -32602);
  });

  await check("logging: setLevel, then notifications/message", async () => {
    await client.setLoggingLevel("info");
    await py(client, "1", { reset: true });
    assert.ok(logs.some((l) => l.level === "info" && /started the python runtime/.test(l.data)),
      JSON.stringify(logs));
    await client.setLoggingLevel("warning");
    await assert.rejects(client.setLoggingLevel("loud"), (e) => e.code === -32602);
  });

  if (mode === "http") {
    await check("20 concurrent sessions: separate state, none blocks another", async () => {
      const sessions = await Promise.all(Array.from({ length: 20 }, () => connect()));
      const ids = new Set(sessions.map((s) => s.transport.sessionId));
      assert.equal(ids.size, 20);
      // Session 0 runs a long loop; the other 19 must all finish first.
      let longDone = false;
      const long = py(sessions[0].client, "while True:\n    pass", { timeout_s: 20 }).then((r) => {
        longDone = true;
        return r;
      });
      await Promise.all(sessions.slice(1).map(async ({ client: c }, i) => {
        await py(c, `mine = ${i}`);
        await js(c, `globalThis.mine = ${i * 10}`);
        const [a, b] = await Promise.all([py(c, "mine"), js(c, "mine")]);
        assert.equal(a.structuredContent.value, i);
        assert.equal(b.structuredContent.value, i * 10);
      }));
      assert.equal(longDone, false, "the other sessions waited for session 0");
      await sessions[0].transport.terminateSession(); // DELETE interrupts it
      await long.catch(() => {});
      await Promise.all(sessions.slice(1).map(async ({ client: c, transport: t }) => {
        await t.terminateSession();
        await c.close();
      }));
      await sessions[0].client.close();
    });

    await check("DELETE ends the session: its id is refused afterwards", async () => {
      const { client: c, transport: t } = await connect();
      const sid = t.sessionId;
      await t.terminateSession();
      const res = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream",
          "mcp-session-id": sid },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      assert.equal(res.status, 404);
      await c.close();
    });
  }

  await client.close();
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.log(`FAIL (uncaught): ${e && e.stack ? e.stack : e}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
