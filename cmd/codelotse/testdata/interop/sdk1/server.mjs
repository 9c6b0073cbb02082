// Interop servers on the TypeScript MCP SDK 1.x (@modelcontextprotocol/sdk,
// pinned in package.json): the same tools with zod 3 schemas (the root
// export of zod 3.25, converted by the SDK with zod-to-json-schema) and
// with zod/v4 schemas (converted with zod's own toJSONSchema), each
// sessionful and stateless, with SSE and with JSON responses:
//
//	/zod3/sessionful-sse  /zod3/sessionful-json  /zod3/stateless-sse  /zod3/stateless-json
//	/zod4/sessionful-sse  /zod4/sessionful-json  /zod4/stateless-sse  /zod4/stateless-json
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z as z3 } from "zod";
import * as z4 from "zod/v4";
import { readFileSync } from "node:fs";
import { registerTools, serve, sessionful, stateless } from "../harness.mjs";

const sdkVersion = JSON.parse(
  readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url), "utf8"),
).version;

const endpoints = {};
for (const [flavor, z] of [["zod3", z3], ["zod4", z4]]) {
  const newServer = () => {
    const s = new McpServer({ name: `interop-sdk1-${flavor}`, version: sdkVersion });
    registerTools(s, z, { wrap: false });
    return s;
  };
  for (const json of [false, true]) {
    const resp = json ? "json" : "sse";
    const opts = { newServer, Transport: StreamableHTTPServerTransport, isInitializeRequest, json };
    endpoints[`/${flavor}/sessionful-${resp}`] = sessionful(opts);
    endpoints[`/${flavor}/stateless-${resp}`] = stateless(opts);
  }
}
serve(endpoints);
