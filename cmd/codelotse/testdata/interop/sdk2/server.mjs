// Interop servers on the TypeScript MCP SDK 2.x (@modelcontextprotocol/server
// with @modelcontextprotocol/node, zod 4; pinned in package.json): the same
// tools, on the Node transport sessionful and stateless, with SSE and with
// JSON responses, and on the SDK's createMcpHandler entry (per-request
// serving of protocol 2026-07-28, 2025 clients served statelessly) with
// SSE and with JSON responses:
//
//	/v2/sessionful-sse  /v2/sessionful-json  /v2/stateless-sse  /v2/stateless-json
//	/v2/handler-sse     /v2/handler-json
import { McpServer, createMcpHandler, isInitializeRequest } from "@modelcontextprotocol/server";
import { NodeStreamableHTTPServerTransport, toNodeHandler } from "@modelcontextprotocol/node";
import * as z from "zod";
import { readFileSync } from "node:fs";
import { registerTools, serve, sessionful, stateless } from "../harness.mjs";

const sdkVersion = JSON.parse(
  readFileSync(new URL("./node_modules/@modelcontextprotocol/server/package.json", import.meta.url), "utf8"),
).version;

const newServer = () => {
  const s = new McpServer({ name: "interop-sdk2", version: sdkVersion });
  registerTools(s, z, { wrap: true });
  return s;
};

const endpoints = {};
for (const json of [false, true]) {
  const resp = json ? "json" : "sse";
  const opts = { newServer, Transport: NodeStreamableHTTPServerTransport, isInitializeRequest, json };
  endpoints[`/v2/sessionful-${resp}`] = sessionful(opts);
  endpoints[`/v2/stateless-${resp}`] = stateless(opts);
  const handler = toNodeHandler(
    createMcpHandler(newServer, {
      responseMode: resp,
      onerror: (err) => console.error(`/v2/handler-${resp}: ${err?.stack ?? err}`),
    }),
  );
  endpoints[`/v2/handler-${resp}`] = (req, res, body) => handler(req, res, body);
}
serve(endpoints);
