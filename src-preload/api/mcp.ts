/**
 * MCP servers (Model Context Protocol): tools a chat's model may call, run by programs the user
 * adds in Settings › Tools, in the `mcp.json` form Claude Desktop and LM Studio use.
 */

/** A server started as a process, talking over its stdin and stdout. */
export interface McpStdioConfig {
  command: string;
  args?: string[];
  /** Added to the process's environment; values are never logged. */
  env?: Record<string, string>;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpConfig {
  url: string;
  headers?: Record<string, string>;
}

export type McpServerConfig = McpStdioConfig | McpHttpConfig;

/** What a server is doing now. */
export type McpServerStatus =
  | { state: 'disabled' }
  | { state: 'starting' }
  | { state: 'ready'; tools: McpToolView[] }
  | { state: 'failed'; reason: string };

export interface McpToolView {
  name: string;
  description?: string;
}

export interface McpServerView {
  name: string;
  config: McpServerConfig;
  enabled: boolean;
  /** What runs: the command line of a stdio server, the URL of an HTTP one. */
  commandLine: string;
  status: McpServerStatus;
}

export interface McpApi {
  /** Every server added, with its status (enabled servers not yet started start now). */
  listMcpServers(): Promise<McpServerView[]>;
  /**
   * Adds a server, or replaces the one named `previousName` (absent or null: a new one); a
   * mistake is an error naming its field. Enabled servers start at once.
   */
  saveMcpServer(name: string, config: McpServerConfig, previousName?: string | null): Promise<McpServerView[]>;
  /** Adds (or replaces, by name) every server of an `mcp.json` text: { "mcpServers": { name: config } }. */
  importMcpServers(json: string): Promise<McpServerView[]>;
  setMcpServerEnabled(name: string, enabled: boolean): Promise<McpServerView[]>;
  /** Removes the server and ends its process. */
  deleteMcpServer(name: string): Promise<McpServerView[]>;
}

export const MCP_METHODS = [
  'listMcpServers',
  'saveMcpServer',
  'importMcpServers',
  'setMcpServerEnabled',
  'deleteMcpServer',
] as const satisfies readonly (keyof McpApi)[];
