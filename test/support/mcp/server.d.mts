import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

export function testServer(envName?: string, stdio?: boolean): McpServer;
export function serveHttp(requiredHeader?: { name: string; value: string }): Promise<{
  url: string;
  close(): Promise<void>;
}>;
