/**
 * MCP server entries as users already write them (Claude Desktop's and LM Studio's `mcp.json`):
 * { "mcpServers": { name: { command, args, env } | { url, headers } } }. Each mistake is an error
 * naming its field.
 */
import type { McpServerConfig } from '../../../src-preload/api';

/** Names are keys in mcp.json and prefixes in "server/tool": no slash, not empty. */
const NAME = /^[^/\s][^/]{0,63}$/;

export function checkServerName(name: unknown): string {
  if (typeof name !== 'string' || !NAME.test(name.trim()))
    throw new Error(
      `an MCP server's name must be 1 to 64 characters without "/" (got ${JSON.stringify(name) ?? String(name)})`,
    );
  return name.trim();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringMap(value: unknown, field: string): Record<string, string> {
  if (!isRecord(value) || !Object.values(value).every((v) => typeof v === 'string'))
    throw new Error(`${field} must be an object of text values`);
  return { ...(value as Record<string, string>) };
}

/** One server's entry, checked; `field` names it in errors ("mcpServers.weather"). */
export function checkServerConfig(value: unknown, field: string): McpServerConfig {
  if (!isRecord(value)) throw new Error(`${field} must be an object with "command" (stdio) or "url" (HTTP)`);
  if ('command' in value) {
    const { command, args, env } = value;
    if (typeof command !== 'string' || command.trim() === '') throw new Error(`${field}.command must be a program`);
    if (args !== undefined && !(Array.isArray(args) && args.every((a) => typeof a === 'string')))
      throw new Error(`${field}.args must be a list of text`);
    return {
      command,
      ...(args === undefined ? {} : { args: [...args] }),
      ...(env === undefined ? {} : { env: stringMap(env, `${field}.env`) }),
    };
  }
  if ('url' in value) {
    const { url, headers } = value;
    let parsed: URL | null = null;
    try {
      parsed = typeof url === 'string' ? new URL(url) : null;
    } catch {
      parsed = null;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
      throw new Error(`${field}.url must be an http:// or https:// address (got ${JSON.stringify(url)})`);
    return { url: parsed.href, ...(headers === undefined ? {} : { headers: stringMap(headers, `${field}.headers`) }) };
  }
  throw new Error(`${field} must have "command" (a stdio server) or "url" (a Streamable HTTP server)`);
}

/** The servers of an mcp.json text, in its order. */
export function parseMcpJson(text: string): { name: string; config: McpServerConfig }[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`the MCP file is not JSON: ${(err as Error).message}`);
  }
  if (!isRecord(parsed) || !isRecord(parsed.mcpServers))
    throw new Error('the MCP file must be { "mcpServers": { "name": { "command", "args", "env" } or { "url" } } }');
  return Object.entries(parsed.mcpServers).map(([name, config]) => ({
    name: checkServerName(name),
    config: checkServerConfig(config, `mcpServers.${name}`),
  }));
}

/** What runs, for the user to see: the command line (env values left out) or the URL. */
export function commandLine(config: McpServerConfig): string {
  if ('url' in config) return config.url;
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);
  const env = Object.keys(config.env ?? {}).map((k) => `${k}=…`);
  return [...env, config.command, ...(config.args ?? [])].map((s, i) => (i < env.length ? s : quote(s))).join(' ');
}
