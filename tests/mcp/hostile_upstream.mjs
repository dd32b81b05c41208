// A hostile code-mode upstream (tests/mcp/test_upstream.py): raw JSON-RPC
// on stdio, no SDK. It lists 30 tools (so search_tools appears), one with a
// schema nested 900 levels deep (1800 in JSON) and odd names; its calls answer with
// garbage lines, a wrong id, a value nested 200 levels deep, or a 20 MB
// message; a description over the 600-byte cut whose cut falls inside a
// character. codecage must survive every one of them.
import readline from "node:readline";

const out = (m) => process.stdout.write(JSON.stringify(m) + "\n");
let deep = { type: "string" };
for (let i = 0; i < 900; i++) deep = { type: "object", properties: { x: deep }, required: ["x"] };
const tools = [
  { name: "deep_schema", description: "*/ }; evil /* \"\"\" end", inputSchema: deep },
  { name: "get-weather.v2", description: "a name that is not an identifier", inputSchema: { type: "object" } },
  { name: "garbage", inputSchema: { type: "object" } },
  { name: "wrong_id", inputSchema: { type: "object" } },
  { name: "deep_value", inputSchema: { type: "object" } },
  { name: "huge", inputSchema: { type: "object" } },
  { name: "ok", description: "answers properly xy" + "\u00e9".repeat(400), inputSchema: { type: "object" } },
];
for (let i = 0; tools.length < 30; i++) tools.push({ name: `filler_${i}`, description: `filler number ${i}`, inputSchema: { type: "object" } });

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.method === "initialize")
    return out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "hostile", version: "0" } } });
  if (m.method === "tools/list") return out({ jsonrpc: "2.0", id: m.id, result: { tools } });
  if (m.method !== "tools/call") return;
  const name = m.params.name;
  if (name === "garbage") {
    process.stdout.write("not json at all\n{\"jsonrpc\": \"2.0\", \"id\": \n[1,2,3]\n{}\n");
    out({ jsonrpc: "2.0", id: "x", result: {} });
    out({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hi" } });
    out({ jsonrpc: "2.0", id: 77, method: "sampling/createMessage", params: {} });
    return out({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "survived" }] } });
  }
  if (name === "wrong_id") return out({ jsonrpc: "2.0", id: m.id + 100000, result: { content: [] } });
  if (name === "deep_value") {
    let v = 1;
    for (let i = 0; i < 200; i++) v = [v];
    return out({ jsonrpc: "2.0", id: m.id, result: { content: [], structuredContent: { v } } });
  }
  if (name === "huge")
    return out({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "x".repeat(20 << 20) }] } });
  out({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: JSON.stringify({ ok: name }) }] } });
});
