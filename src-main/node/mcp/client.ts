/**
 * One connection to an MCP server through the official SDK's client: a process over stdio or an
 * address over Streamable HTTP; its tools listed once, calls made with a timeout and a cancel.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from '../../../src-preload/api';
import { version } from '../../../package.json';

/** A tool as the server lists it; its input schema goes to the chat template as OpenAI's `parameters`. */
export interface McpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** A call's outcome: the text sent back to the model as the tool message. */
export interface McpCallResult {
  text: string;
  /** The server said the call failed (its text says why). */
  isError: boolean;
}

/** How long starting a server (and listing its tools) may take. */
export const MCP_START_TIMEOUT_MS = 30_000;
/** The last characters of a process's stderr kept to say why it failed. */
const STDERR_KEPT = 1000;

export class McpConnection {
  /** The end of the process's stderr so far ('' for HTTP). */
  #stderr: () => string = () => '';
  #closedBy: string | null = null;
  readonly #onClose = new Set<(reason: string) => void>();

  private constructor(
    private readonly client: Client,
    readonly tools: McpTool[],
  ) {}

  /** Starts the server and lists its tools; throws why it could not (its stderr's end included). */
  static async open(config: McpServerConfig, timeoutMs = MCP_START_TIMEOUT_MS): Promise<McpConnection> {
    const client = new Client({ name: 'gufo', version });
    const transport = transportOf(config);
    let stderr = '';
    if (transport instanceof StdioClientTransport)
      transport.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT)));
    let connection: McpConnection | null = null;
    client.onclose = () => {
      if (connection) connection.#closed('the server closed the connection');
    };
    try {
      await client.connect(transport, { timeout: timeoutMs });
      const listed = await client.listTools(undefined, { timeout: timeoutMs });
      const tools = listed.tools.map((t) => ({
        name: t.name,
        ...(t.description === undefined ? {} : { description: t.description }),
        inputSchema: t.inputSchema,
      }));
      connection = new McpConnection(client, tools);
      connection.#stderr = () => stderr;
      return connection;
    } catch (err) {
      await client.close().catch(() => undefined);
      const said = stderr.trim();
      throw new Error(`${errorText(err)}${said === '' ? '' : ` (its stderr: ${said})`}`);
    }
  }

  /** Why the connection ended (null while it is open). */
  get closedBy(): string | null {
    return this.#closedBy;
  }

  /** Calls `listener` once when the server goes away (a crash, an exit), not when close() ends it. */
  onClose(listener: (reason: string) => void): void {
    this.#onClose.add(listener);
  }

  /** Runs a tool; throws on a timeout, a cancel, a crash or an answer that is not MCP's. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; timeoutMs: number },
  ): Promise<McpCallResult> {
    if (this.#closedBy) throw new Error(this.#closedBy);
    try {
      const result = await this.client.callTool({ name, arguments: args }, undefined, {
        timeout: options.timeoutMs,
        ...(options.signal && { signal: options.signal }),
      });
      return { text: resultText(result), isError: result.isError === true };
    } catch (err) {
      const said = this.#stderr().trim();
      const crashed = this.#closedBy !== null && said !== '' ? ` (its stderr: ${said})` : '';
      throw new Error(`${errorText(err)}${crashed}`);
    }
  }

  async close(): Promise<void> {
    this.#onClose.clear();
    this.#closedBy ??= 'closed';
    await this.client.close();
  }

  #closed(reason: string): void {
    if (this.#closedBy) return;
    this.#closedBy = reason;
    for (const listener of this.#onClose) listener(reason);
  }
}

function transportOf(config: McpServerConfig): Transport {
  if ('url' in config)
    return new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: { ...config.headers } },
    });
  return new StdioClientTransport({
    command: config.command,
    args: config.args ?? [],
    // The SDK's safe defaults (PATH, HOME, ...) with the entry's own; never the whole environment.
    env: { ...getDefaultEnvironment(), ...config.env },
    stderr: 'pipe',
  });
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A result's content as text: text parts as they are, anything else as JSON. */
function resultText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  const parts = content.map((part) =>
    part.type === 'text' && typeof part.text === 'string' ? part.text : JSON.stringify(part),
  );
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  if (parts.length === 0 && 'toolResult' in result) return JSON.stringify(result.toolResult);
  return parts.join('\n');
}
