/**
 * The MCP servers one back end (or one `gufo chat`) knows, each started on first need and kept
 * running until it is removed, changed, disabled, or the set closes; a server that crashes is
 * marked failed with the reason, and the next need starts it again.
 */
import type { McpServerConfig, McpServerStatus } from '../../../src-preload/api';
import { McpConnection, type McpCallResult, type McpTool } from './client';

export interface McpServerEntry {
  name: string;
  config: McpServerConfig;
  enabled: boolean;
}

/** How long one tool call may run before it is abandoned. */
export const MCP_CALL_TIMEOUT_MS = 120_000;

interface Slot {
  entry: McpServerEntry;
  status: McpServerStatus;
  /** The start under way or done; null before the first need, after a failure, or once ended. */
  connection: Promise<McpConnection> | null;
}

export interface McpServerSetOptions {
  /** Called whenever a server's status changes. */
  onChange?: () => void;
  startTimeoutMs?: number;
  callTimeoutMs?: number;
}

export class McpServerSet {
  readonly #slots = new Map<string, Slot>();
  #closed = false;

  constructor(private readonly options: McpServerSetOptions = {}) {}

  /** Takes the entries as they are now: servers gone, changed or disabled end; the rest keep running. */
  sync(entries: readonly McpServerEntry[]): void {
    const next = new Map(entries.map((e) => [e.name, e]));
    for (const [name, slot] of this.#slots) {
      const entry = next.get(name);
      if (!entry || !entry.enabled || JSON.stringify(entry.config) !== JSON.stringify(slot.entry.config)) {
        void this.#end(slot); // the process ends in the background; nothing waits on it
        this.#slots.delete(name);
      }
    }
    for (const entry of entries) {
      const slot = this.#slots.get(entry.name);
      if (slot) slot.entry = entry;
      else
        this.#slots.set(entry.name, {
          entry,
          status: entry.enabled ? { state: 'starting' } : { state: 'disabled' },
          connection: null,
        });
    }
    this.options.onChange?.();
  }

  names(): string[] {
    return [...this.#slots.keys()];
  }

  status(name: string): McpServerStatus {
    return this.#slots.get(name)?.status ?? { state: 'failed', reason: `no MCP server named "${name}"` };
  }

  /** The running server `name`, started now if it is not; throws why it cannot run. */
  connection(name: string): Promise<McpConnection> {
    const slot = this.#slots.get(name);
    if (this.#closed) return Promise.reject(new Error('Gufo is closing; no MCP server starts now'));
    if (!slot) return Promise.reject(new Error(`no MCP server named "${name}" (add it in Settings › Tools)`));
    if (!slot.entry.enabled) return Promise.reject(new Error(`the MCP server "${name}" is disabled`));
    if (slot.connection) return slot.connection;
    slot.status = { state: 'starting' };
    this.options.onChange?.();
    const started = McpConnection.open(slot.entry.config, this.options.startTimeoutMs).then(
      (connection) => {
        if (slot.connection !== started) {
          void connection.close(); // removed or changed while starting
          return connection;
        }
        slot.status = {
          state: 'ready',
          tools: connection.tools.map(({ name, description }) => ({ name, description })),
        };
        connection.onClose((reason) => {
          if (slot.connection !== started) return;
          slot.connection = null;
          slot.status = { state: 'failed', reason: `the server stopped: ${reason}` };
          this.options.onChange?.();
        });
        this.options.onChange?.();
        return connection;
      },
      (err: unknown) => {
        if (slot.connection === started) {
          slot.connection = null;
          slot.status = { state: 'failed', reason: (err as Error).message };
          this.options.onChange?.();
        }
        throw err;
      },
    );
    slot.connection = started;
    return started;
  }

  /** Starts every enabled server not yet started (for Settings › Tools to show their tools); waits for none. */
  startAll(): void {
    for (const slot of this.#slots.values())
      if (slot.entry.enabled && !slot.connection && slot.status.state !== 'failed')
        this.connection(slot.entry.name).catch(() => undefined); // the status says why
  }

  /**
   * The tools of each named server that runs or can start; a server that cannot is left out (its
   * status says why). `start` false: only the servers already running (nothing starts).
   */
  async tools(names: readonly string[], start = true): Promise<{ server: string; tool: McpTool }[]> {
    const found = await Promise.all(
      names.map(async (server) => {
        if (!start && this.#slots.get(server)?.status.state !== 'ready') return [];
        try {
          return (await this.connection(server)).tools.map((tool) => ({ server, tool }));
        } catch {
          return [];
        }
      }),
    );
    return found.flat();
  }

  /** Runs a tool on a server; throws a clear reason on a crash, a timeout, a cancel or garbage. */
  async call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<McpCallResult> {
    const connection = await this.connection(server);
    return connection.callTool(tool, args, {
      timeoutMs: this.options.callTimeoutMs ?? MCP_CALL_TIMEOUT_MS,
      ...(signal && { signal }),
    });
  }

  /** Ends every server's process or session. */
  async close(): Promise<void> {
    this.#closed = true;
    const ending = [...this.#slots.values()].map((slot) => this.#end(slot));
    this.#slots.clear();
    await Promise.all(ending);
  }

  async #end(slot: Slot): Promise<void> {
    const started = slot.connection;
    slot.connection = null;
    if (!started) return;
    try {
      await (await started).close();
    } catch {
      // It never started: nothing runs.
    }
  }
}
