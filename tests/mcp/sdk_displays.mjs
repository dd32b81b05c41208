// Displays through the official MCP TypeScript SDK: the client parses the
// result with its own schema (image and embedded resource blocks).
// usage: node sdk_displays.mjs CODECAGE   (prints "ok" or throws)
import assert from "node:assert/strict";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [target] = process.argv.slice(2);
const client = new Client({ name: "codecage-displays-test", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: target, args: ["mcp"], stderr: "inherit" }));

const py = await client.callTool({
  name: "run_python",
  arguments: {
    code:
      "import matplotlib.pyplot as plt\n" +
      "fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)\n_ = ax.plot([1, 3, 2])\n" +
      "import pandas as pd\npd.DataFrame({'a': [1, 2]}).shape",
  },
});
CallToolResultSchema.parse(py);
assert.equal(py.isError, false);
assert.deepEqual(py.content.map((c) => c.type), ["text", "image"]);
assert.equal(py.content[1].mimeType, "image/png");
assert.ok(Buffer.from(py.content[1].data, "base64").subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47])));

const js = await client.callTool({
  name: "run_javascript",
  arguments: { code: "display('<svg xmlns=\"http://www.w3.org/2000/svg\"/>', 'image/svg+xml'); display('<i>t</i>', 'text/html'); 1" },
});
CallToolResultSchema.parse(js);
assert.deepEqual(js.content.map((c) => c.type), ["text", "image", "resource"]);
assert.equal(js.content[1].mimeType, "image/svg+xml");
assert.equal(Buffer.from(js.content[1].data, "base64").toString(), '<svg xmlns="http://www.w3.org/2000/svg"/>');
assert.equal(js.content[2].resource.mimeType, "text/html");
assert.equal(js.content[2].resource.text, "<i>t</i>");
await client.close();
console.log("ok");
