/**
 * `gufo chat --mcp mcp.json`: the app's chat tool loop in the terminal. The servers of the file
 * start (their command lines shown first); their tools go to the template; each call an answer
 * makes is shown and asked about (y/n, or --yes for all), run, and its result given back to the
 * model, round after round up to the app's default limit.
 */
import { readFileSync } from 'node:fs';
import { DEFAULT_TOOL_USE, type MessageToolCall } from '../../../src-preload/api';
import {
  chatToolSet,
  DENIED,
  forcedCall,
  runToolCall,
  type ChatToolSet,
  type ForcedCall,
} from '../../backend/chat/mcp-tools';
import type { ModelText } from '../../backend/chat/prompt';
import { splitToolCalls } from '../../core/tool-calls/index';
import { commandLine, parseMcpJson } from '../../node/mcp/config';
import { McpServerSet } from '../../node/mcp/server-set';
import { CliError, log } from '../command';

export const TOOLS_HELP = `  --mcp FILE            MCP servers, as mcp.json lists them ({ "mcpServers": { name: { command,
                        args, env } or { url, headers } } }): their tools go to the model, and
                        each call is shown and asked about (y/n) before it runs
  --yes                 run every call without asking
  --tool-choice C       auto (default), required (some call) or a tool's name: the API's
                        tool_choice, for the answer to each of your messages`;

export const TOOLS_OPTIONS = {
  mcp: { type: 'string' },
  yes: { type: 'boolean' },
  'tool-choice': { type: 'string' },
} as const;

export interface ChatTools {
  set: ChatToolSet;
  /** The forced call of the answer to a user's message; null: the model chooses. */
  forced: ForcedCall | null;
  /** Runs the calls of `answer` (asking first unless --yes); answers the tool messages, or null when it makes none that can run. */
  runCalls(
    answer: string,
    ask: (question: string) => Promise<string | null>,
    signal: AbortSignal,
  ): Promise<string[] | null>;
  close(): Promise<void>;
}

/** The rounds of calls after one message, as the app's default. */
export const MAX_ROUNDS = DEFAULT_TOOL_USE.maxRounds;

/** The tools of --mcp (none without it) and the --tool-choice; starts the servers. */
export async function openChatTools(
  text: ModelText,
  values: { mcp?: unknown; yes?: unknown; 'tool-choice'?: unknown },
): Promise<ChatTools> {
  const servers = new McpServerSet();
  const entries = typeof values.mcp === 'string' ? mcpFile(values.mcp) : [];
  for (const { name, config } of entries) log(`MCP server ${name}: ${commandLine(config)}`);
  servers.sync(entries.map((e) => ({ ...e, enabled: true })));
  const set = await chatToolSet(undefined, servers, servers.names());
  for (const { name } of entries) {
    const status = servers.status(name);
    log(
      status.state === 'ready'
        ? `MCP server ${name}: ${status.tools.length} tools`
        : `MCP server ${name}: ${status.state === 'failed' ? `failed: ${status.reason}` : status.state}`,
    );
  }
  const choice = typeof values['tool-choice'] === 'string' ? values['tool-choice'] : 'auto';
  let forced: ForcedCall | null;
  try {
    forced = forcedCall(text, set.tools, choice);
  } catch (err) {
    await servers.close();
    throw new CliError(`--tool-choice: ${(err as Error).message}`);
  }
  const always = values.yes === true;
  const syntax = text.toolCalls.syntax;

  const runCall = async (call: MessageToolCall, ask: (q: string) => Promise<string | null>, signal: AbortSignal) => {
    const server = set.owners.get(call.name);
    if (!server) return `Error: no tool named ${call.name}`;
    log(`[call ${server}/${call.name} ${call.arguments}]`);
    if (!always) {
      const reply = (await ask(`Run ${call.name} from ${server}? [y/N] `))?.trim().toLowerCase();
      if (reply !== 'y' && reply !== 'yes') {
        log('[denied]');
        return DENIED.content;
      }
    }
    const outcome = await runToolCall(servers, server, call, signal);
    log(outcome.error === null ? `[result] ${outcome.content}` : `[error] ${outcome.error}`);
    return outcome.content;
  };

  return {
    set,
    forced,
    async runCalls(answer, ask, signal) {
      const { calls, complete } = splitToolCalls(syntax, answer);
      const whole = (complete ? calls : calls?.slice(0, -1)) ?? [];
      if (whole.length === 0 || set.tools.length === 0) return null;
      const results: string[] = [];
      for (const call of whole) {
        if (signal.aborted) break;
        results.push(await runCall(call, ask, signal));
      }
      return results;
    },
    close: () => servers.close(),
  };
}

function mcpFile(path: string): ReturnType<typeof parseMcpJson> {
  let json: string;
  try {
    json = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`--mcp ${path}: ${(err as Error).message}`);
  }
  try {
    return parseMcpJson(json);
  } catch (err) {
    throw new CliError(`--mcp ${path}: ${(err as Error).message}`);
  }
}
