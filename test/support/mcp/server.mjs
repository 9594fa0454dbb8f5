// An MCP server for the tests, written with the official SDK's server API: over stdio by
// default, or (imported) over Streamable HTTP through serveHttp. Its tools: add, weather, fail,
// crash (the process exits; stdio only), hang (never answers), garbage (an answer that is not MCP's).
// `node server.mjs --env NAME` also offers env_value, which answers that variable.
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export function testServer(envName, stdio = true) {
  const server = new McpServer({ name: 'gufo-test', version: '1.0.0' });
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
    ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool(
    'weather',
    { description: 'The weather in a city', inputSchema: { city: z.string() } },
    ({ city }) => ({ content: [{ type: 'text', text: JSON.stringify({ city, temperature: 18, sky: 'sunny' }) }] }),
  );
  // Its arguments can only be one of two objects: a model held to the schema (a required call) writes one whole.
  server.registerTool(
    'forecast',
    {
      description: 'Tomorrow, in a unit',
      inputSchema: z.object({ unit: z.enum(['celsius', 'fahrenheit']) }).strict(),
    },
    ({ unit }) => ({ content: [{ type: 'text', text: `tomorrow: 21 degrees ${unit}` }] }),
  );
  server.registerTool('fail', { description: 'Always fails', inputSchema: {} }, () => ({
    isError: true,
    content: [{ type: 'text', text: 'the weather service is down' }],
  }));
  // Only as a process of its own: served over HTTP it would end the test runner.
  if (stdio)
    server.registerTool('crash', { description: 'Exits the process', inputSchema: {} }, () => {
      process.stderr.write('test server: crashing on purpose\n');
      process.exit(3);
    });
  server.registerTool('hang', { description: 'Never answers', inputSchema: {} }, () => new Promise(() => {}));
  server.registerTool('garbage', { description: 'Answers garbage', inputSchema: {} }, () => ({ content: 42 }));
  if (envName)
    server.registerTool('env_value', { description: `Answers ${envName}`, inputSchema: {} }, () => ({
      content: [{ type: 'text', text: process.env[envName] ?? '(unset)' }],
    }));
  return server;
}

/** Serves a fresh test server per session over Streamable HTTP on 127.0.0.1; answers its URL and a closer. */
export async function serveHttp(requiredHeader) {
  const http = createServer(async (req, res) => {
    if (requiredHeader && req.headers[requiredHeader.name.toLowerCase()] !== requiredHeader.value) {
      res.writeHead(401).end('missing header');
      return;
    }
    // Stateless: each request gets its own server and transport, as the SDK's example does.
    const server = testServer(undefined, false);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => new Promise((resolve) => (http.closeAllConnections(), http.close(resolve))),
  };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const at = process.argv.indexOf('--env');
  await testServer(at > 0 ? process.argv[at + 1] : undefined).connect(new StdioServerTransport());
}
