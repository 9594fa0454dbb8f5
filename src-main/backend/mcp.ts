/**
 * McpApi: the MCP servers of Settings › Tools, kept in SQLite, started by node/mcp/server-set.ts
 * only once the user has added them; every change is announced with every server's status.
 */
import type { McpApi, McpServerView } from '../../src-preload/api';
import { checkServerConfig, checkServerName, commandLine, parseMcpJson } from '../node/mcp/config';
import { McpServerSet } from '../node/mcp/server-set';
import type { Db } from '../node/store/database';
import { McpServerStore } from '../node/store/mcp-servers';
import type { BackendContext } from './context';
import type { EventHub } from './events';
import { promised } from './promised';

/** The store and the running servers of one back end; `startTimeoutMs`/`callTimeoutMs` for tests. */
export function openMcpServers(
  db: Db,
  events: EventHub,
  timeouts: { startTimeoutMs?: number; callTimeoutMs?: number } = {},
): { mcpServers: McpServerStore; mcp: McpServerSet } {
  const mcpServers = new McpServerStore(db);
  const mcp = new McpServerSet({
    ...timeouts,
    onChange: () => events.emit({ type: 'mcp-servers', servers: serverViews(mcpServers, mcp) }),
  });
  mcp.sync(mcpServers.list());
  return { mcpServers, mcp };
}

function serverViews(store: McpServerStore, set: McpServerSet): McpServerView[] {
  return store.list().map((s) => ({
    ...s,
    commandLine: commandLine(s.config),
    status: s.enabled ? set.status(s.name) : { state: 'disabled' },
  }));
}

export function createMcpApi(ctx: BackendContext): McpApi {
  const { mcpServers: store, mcp } = ctx;
  ctx.onClose(() => mcp.close());

  /** Every server after a change: the set follows the store, enabled servers start. */
  const changed = (): McpServerView[] => {
    mcp.sync(store.list());
    mcp.startAll();
    return serverViews(store, mcp);
  };

  const requireServer = (name: unknown): string => {
    if (typeof name !== 'string' || !store.get(name)) throw new Error(`no MCP server named ${JSON.stringify(name)}`);
    return name;
  };

  return promised<McpApi>({
    listMcpServers() {
      mcp.startAll();
      return serverViews(store, mcp);
    },

    saveMcpServer(name, config, previousName) {
      const server = { name: checkServerName(name), config: checkServerConfig(config, 'the server'), enabled: true };
      if (previousName == null || previousName === server.name) {
        if (previousName == null && store.get(server.name))
          throw new Error(`an MCP server named "${server.name}" exists already; edit it, or choose another name`);
        if (previousName != null) server.enabled = store.get(requireServer(previousName))!.enabled;
        store.put(server);
      } else {
        server.enabled = store.get(requireServer(previousName))!.enabled;
        if (store.get(server.name)) throw new Error(`an MCP server named "${server.name}" exists already`);
        store.replace(previousName, server);
      }
      return changed();
    },

    importMcpServers(json) {
      if (typeof json !== 'string') throw new Error('importMcpServers takes the text of an mcp.json file');
      const servers = parseMcpJson(json);
      if (servers.length === 0) throw new Error('the MCP file lists no servers under "mcpServers"');
      for (const { name, config } of servers) store.put({ name, config, enabled: store.get(name)?.enabled ?? true });
      return changed();
    },

    setMcpServerEnabled(name, enabled) {
      if (typeof enabled !== 'boolean') throw new Error('enabled must be true or false');
      store.setEnabled(requireServer(name), enabled);
      return changed();
    },

    deleteMcpServer(name) {
      store.delete(requireServer(name));
      return changed();
    },
  });
}
