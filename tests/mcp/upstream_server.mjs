// A stdio MCP server written with the official TypeScript SDK, used as a
// code-mode upstream of `codecage mcp --upstream` (tests/mcp/test_upstream.py).
// Three tools the issue asks for (weather: structured; shout: text; fail:
// isError) and a few for the tests: slow (concurrency), stats, env, crash, hang.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const tools = [
  {
    name: "weather",
    description: "The forecast for a city.",
    inputSchema: {
      type: "object",
      properties: { city: { type: "string" }, days: { type: "integer" } },
      required: ["city"],
    },
    outputSchema: {
      type: "object",
      properties: { city: { type: "string" }, temp_c: { type: "number" }, days: { type: "integer" } },
      required: ["city", "temp_c", "days"],
    },
  },
  {
    name: "shout",
    description: "Upper-cases text (returned as text content).",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  {
    name: "fail",
    description: "Always fails with the reason given.",
    inputSchema: { type: "object", properties: { reason: { type: "string" } } },
  },
  {
    name: "slow",
    description: "Waits ms milliseconds; reports how many calls were running at most.",
    inputSchema: { type: "object", properties: { ms: { type: "integer" } } },
  },
  { name: "stats", description: "How many tools/call requests reached this server.", inputSchema: { type: "object" } },
  {
    name: "env",
    description: "The value of one of this server's environment variables.",
    inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  },
  { name: "crash", description: "Exits the server process.", inputSchema: { type: "object" } },
  { name: "hang", description: "Never answers.", inputSchema: { type: "object" } },
];

let calls = 0;
let active = 0;
let maxActive = 0;
const server = new Server({ name: "cc-test-upstream", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  calls++;
  const a = req.params.arguments || {};
  switch (req.params.name) {
    case "weather": {
      const v = { city: a.city, temp_c: 21.5, days: a.days ?? 1 };
      return { content: [{ type: "text", text: JSON.stringify(v) }], structuredContent: v };
    }
    case "shout":
      return { content: [{ type: "text", text: String(a.text).toUpperCase() }] };
    case "fail":
      return { content: [{ type: "text", text: `the tool failed: ${a.reason ?? "no reason"}` }], isError: true };
    case "slow": {
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise((r) => setTimeout(r, a.ms ?? 500));
      active--;
      return { content: [{ type: "text", text: JSON.stringify({ max_active: maxActive }) }] };
    }
    case "stats":
      return { content: [{ type: "text", text: JSON.stringify({ calls, pid: process.pid }) }] };
    case "env":
      return { content: [{ type: "text", text: JSON.stringify({ value: process.env[a.name] ?? null }) }] };
    case "crash":
      process.exit(3);
    case "hang":
      return new Promise(() => {});
    default:
      return { content: [{ type: "text", text: `no tool ${req.params.name}` }], isError: true };
  }
});
await server.connect(new StdioServerTransport());
