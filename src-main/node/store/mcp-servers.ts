/** The MCP servers the user added (Settings › Tools): one row each, its mcp.json entry as JSON. */
import type { McpServerConfig } from '../../../src-preload/api';
import type { Db } from './database';
import { CorruptRowError, parseJsonColumn } from './json-column';

export interface StoredMcpServer {
  name: string;
  config: McpServerConfig;
  enabled: boolean;
}

interface Row {
  name: string;
  config_json: string;
  enabled: number;
}

export class McpServerStore {
  constructor(private readonly db: Db) {}

  /** In the order they were added. */
  list(): StoredMcpServer[] {
    return (this.db.prepare('SELECT * FROM mcp_servers ORDER BY created_at, rowid').all() as Row[]).map(toServer);
  }

  get(name: string): StoredMcpServer | undefined {
    const row = this.db.prepare('SELECT * FROM mcp_servers WHERE name = ?').get(name) as Row | undefined;
    return row && toServer(row);
  }

  /** Adds the server, or replaces the one of the same name (keeping its place). */
  put(server: StoredMcpServer): void {
    this.db
      .prepare(
        `INSERT INTO mcp_servers (name, config_json, enabled) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET config_json = excluded.config_json, enabled = excluded.enabled`,
      )
      .run(server.name, JSON.stringify(server.config), server.enabled ? 1 : 0);
  }

  /** Renames `from` to `to` with its new entry; false when there is no `from`. */
  replace(from: string, server: StoredMcpServer): boolean {
    return (
      this.db
        .prepare('UPDATE mcp_servers SET name = ?, config_json = ?, enabled = ? WHERE name = ?')
        .run(server.name, JSON.stringify(server.config), server.enabled ? 1 : 0, from).changes > 0
    );
  }

  setEnabled(name: string, enabled: boolean): boolean {
    return this.db.prepare('UPDATE mcp_servers SET enabled = ? WHERE name = ?').run(enabled ? 1 : 0, name).changes > 0;
  }

  delete(name: string): boolean {
    return this.db.prepare('DELETE FROM mcp_servers WHERE name = ?').run(name).changes > 0;
  }
}

function toServer(row: Row): StoredMcpServer {
  const config = parseJsonColumn<McpServerConfig>(row.config_json, {
    table: 'mcp_servers',
    id: row.name,
    column: 'config_json',
  });
  if (config === null || typeof config !== 'object')
    throw new CorruptRowError(`the database row mcp_servers ${row.name} has no usable config_json; delete that server`);
  return { name: row.name, config, enabled: row.enabled === 1 };
}
