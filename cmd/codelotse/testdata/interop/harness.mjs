// The part of the interop servers that is the same for every SDK: the
// tools (written once, for whichever zod the SDK takes), the HTTPS
// listener, the bearer check, and the record of every request that
// reached the process. Only Node's own modules are imported here; each
// SDK's server.mjs passes in its McpServer, transports and zod.
//
// Environment: INTEROP_CERT and INTEROP_KEY (PEM files of the test's
// loopback PKI), INTEROP_TOKEN (the bearer token every MCP request must
// carry). The process listens on 127.0.0.1 on a free port and prints one
// line {"listening": <port>} when ready. GET /__requests (with the bearer
// token) answers the record: one entry per HTTP request on an MCP path,
// {path, http, rpc, tool, arguments}, in arrival order, taken before the
// SDK saw the request.
import { readFileSync } from "node:fs";
import https from "node:https";
import { randomUUID } from "node:crypto";

const records = [];

// registerTools adds the interop tools to server. z is the zod namespace
// the SDK takes (zod 3, zod/v4 or zod 4); wrap says whether inputSchema is
// a z.object (SDK 2.x) or a raw shape (the SDK 1.x idiom).
export function registerTools(server, z, { wrap }) {
  const schema = (shape) => (wrap ? z.object(shape) : shape);
  const readOnly = { readOnlyHint: true };
  const answer = (text) => ({ content: [{ type: "text", text }] });

  // Plain keywords only: a required string.
  server.registerTool(
    "echo",
    { description: "Echoes a text.", inputSchema: schema({ text: z.string() }), annotations: readOnly },
    async ({ text }) => answer(`Echo: ${text}`),
  );

  // Numbers, strings, enum, const, nullable, defaults, pattern.
  server.registerTool(
    "search",
    {
      description: "Searches the wiki.",
      inputSchema: schema({
        query: z.string().min(2).max(40).describe("What to look for."),
        limit: z.number().int().min(1).max(50).optional(),
        offset: z.number().int().optional(),
        score: z.number().gt(0).lt(1).optional(),
        step: z.number().multipleOf(5).optional(),
        page: z.number().int().nullable().optional(),
        kind: z.enum(["page", "ticket"]).default("page"),
        ticket: z.string().regex(/^[A-Z]{2,5}-[0-9]+$/).optional(),
        mode: z.literal("fast"),
        level: z.literal(2).optional(),
        exact: z.boolean().default(false),
        note: z.string().nullable(),
      }),
      annotations: readOnly,
    },
    async (args) => answer(`Found 1 ${args.kind} for ${args.query} (limit ${args.limit ?? "none"}, exact ${args.exact}).`),
  );

  // String formats.
  server.registerTool(
    "lookup",
    {
      description: "Looks up a change.",
      inputSchema: schema({
        topic: z.string().max(30),
        since: z.string().datetime().optional(),
        day: z.string().date().optional(),
        id: z.string().uuid().optional(),
        link: z.string().url().optional(),
      }),
      annotations: readOnly,
    },
    async ({ topic }) => answer(`Change log for ${topic}: nothing new.`),
  );

  // An e-mail address: every call is either invalid or blocked before it
  // is sent.
  server.registerTool(
    "notify",
    { description: "Notifies a person.", inputSchema: schema({ to: z.string().email() }), annotations: readOnly },
    async () => answer("Notified."),
  );
  // Nested and array inputs stay unsupported: discovery refuses this one.
  server.registerTool(
    "filter",
    {
      description: "Filters by an object and a list.",
      inputSchema: schema({ where: z.object({ author: z.string() }), tags: z.array(z.string()) }),
      annotations: readOnly,
    },
    async () => answer("Filtered."),
  );
}

// sessionful serves one endpoint with a transport per session, as the
// SDKs' examples do: initialize without a session id creates one, every
// other request names its session (else 400, or 404 for an unknown one).
export function sessionful({ newServer, Transport, isInitializeRequest, json }) {
  const transports = new Map();
  return async (req, res, body) => {
    const sid = req.headers["mcp-session-id"];
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
      if (sid) {
        return rpcError(res, 404, -32001, "Session not found");
      }
      if (req.method !== "POST" || !isInitializeRequest(body)) {
        return rpcError(res, 400, -32000, "Bad Request: No valid session ID provided");
      }
      transport = new Transport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  };
}

// stateless serves one endpoint with a server and a transport per POST,
// as the SDKs' stateless examples do; GET and DELETE are 405.
export function stateless({ newServer, Transport, json }) {
  return async (req, res, body) => {
    if (req.method !== "POST") {
      return rpcError(res, 405, -32000, "Method not allowed.");
    }
    const server = newServer();
    const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: json });
    res.on("close", () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
}

function rpcError(res, status, code, message) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

// serve listens on 127.0.0.1 over TLS and routes each MCP path of
// endpoints (path → handler(req, res, parsedBody)).
export function serve(endpoints) {
  const token = process.env.INTEROP_TOKEN;
  if (!token) throw new Error("INTEROP_TOKEN is not set");
  const server = https.createServer(
    { cert: readFileSync(process.env.INTEROP_CERT), key: readFileSync(process.env.INTEROP_KEY) },
    async (req, res) => {
      const path = new URL(req.url, "https://localhost").pathname;
      if (req.headers.authorization !== `Bearer ${token}`) {
        res.writeHead(401, { "Content-Type": "application/json", "WWW-Authenticate": "Bearer" });
        return res.end('{"error":"unauthorized"}');
      }
      if (path === "/__requests" && req.method === "GET") {
        res.writeHead(200, { "Content-Type": "application/json" });
        return res.end(JSON.stringify(records));
      }
      const handler = endpoints[path];
      if (!handler) {
        res.writeHead(404).end();
        return;
      }
      let body;
      if (req.method === "POST") {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        const text = Buffer.concat(chunks).toString("utf8");
        try {
          body = JSON.parse(text);
        } catch {
          records.push({ path, http: req.method, rpc: "", tool: "", arguments: null });
          return rpcError(res, 400, -32700, "Parse error");
        }
      }
      const msg = body && !Array.isArray(body) ? body : {};
      records.push({
        path,
        http: req.method,
        rpc: msg.method ?? "",
        tool: msg.method === "tools/call" ? (msg.params?.name ?? "") : "",
        arguments: msg.method === "tools/call" ? (msg.params?.arguments ?? null) : null,
      });
      try {
        await handler(req, res, body);
      } catch (err) {
        console.error(`${path}: ${err?.stack ?? err}`);
        if (!res.headersSent) rpcError(res, 500, -32603, "Internal error");
      }
    },
  );
  server.listen(0, "127.0.0.1", () => {
    console.log(JSON.stringify({ listening: server.address().port }));
  });
  for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
}
