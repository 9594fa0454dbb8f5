/**
 * MCP tools in a chat, shared by the app's chat and `gufo chat`: the tools the model sees (the
 * chat's JSON tools, then its servers' tools, their schemas as the servers give them), the
 * forced call a tool choice asks for, the call an answer leaves waiting, and one call run into
 * the text of its tool message.
 */
import type { MessageRole, MessageToolCall } from '../../../src-preload/api';
import type { ChatTool } from '../../core/chat-template';
import type { JsonConstraint } from '../../core/constrained/token-constraint';
import { splitToolCalls, type ToolCallSyntax } from '../../core/tool-calls/index';
import type { McpServerSet } from '../../node/mcp/server-set';
import { chatToolRequest, toolPrompt } from '../openai/tools';
import type { ModelText } from './prompt';

export interface ChatToolSet {
  /** For the template: the chat's own tools, then the MCP servers'. */
  tools: ChatTool[];
  /** Which server runs each MCP tool, by the tool's name. */
  owners: Map<string, string>;
}

/**
 * The tools the model sees; a name two servers share goes to the first (a chat's own tool wins).
 * `start` false: only the servers already running count (for a view, which starts nothing).
 */
export async function chatToolSet(
  own: readonly ChatTool[] | undefined,
  servers: McpServerSet,
  names: readonly string[],
  start = true,
): Promise<ChatToolSet> {
  const tools = [...(own ?? [])];
  const taken = new Set(tools.map((t) => (t.function as { name: string }).name));
  const owners = new Map<string, string>();
  for (const { server, tool } of await servers.tools(names, start)) {
    if (taken.has(tool.name)) continue;
    taken.add(tool.name);
    owners.set(tool.name, server);
    tools.push({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.inputSchema,
      },
    });
  }
  return { tools, owners };
}

/** What a required call adds to an answer: its marker after the prompt (also the answer's start) and the output's schema. */
export interface ForcedCall {
  prefill: string;
  constraint: JsonConstraint | null;
}

/** The forced call of `choice` ("required" or a tool's name) among `tools`; null for "auto" or no tools. */
export function forcedCall(text: ModelText, tools: readonly ChatTool[], choice: string): ForcedCall | null {
  const request = tools.length === 0 ? null : chatToolRequest(tools, choice);
  if (!request || request.choice === 'auto') {
    if (tools.length === 0 && choice !== 'auto')
      throw new Error(`the tool choice "${choice}" asks for a call, but the chat gives the model no tools`);
    return null;
  }
  const { prefill, constraint } = toolPrompt(text, request);
  return { prefill, constraint };
}

/** A message of the branch as far as calls go. */
export interface BranchTurn {
  role: MessageRole;
  content: string;
  status: string;
}

/** The call an answer leaves without a result: the answer's index in the branch, the call's index among its calls. */
export interface UnansweredCall {
  at: number;
  index: number;
  call: MessageToolCall;
}

/**
 * The next call of the branch's last answer that has no tool message yet; null when there is
 * none, when a result was stopped by the user, or when the answer is past `maxRounds` rounds of
 * calls since the user's last message (the chat then waits for the user).
 */
export function unansweredCall(
  branch: readonly BranchTurn[],
  syntax: ToolCallSyntax,
  maxRounds: number,
): UnansweredCall | null {
  let at = branch.length - 1;
  while (at >= 0 && branch[at]!.role === 'tool') {
    if (branch[at]!.status === 'stopped') return null;
    at--;
  }
  const answer = branch[at];
  if (!answer || answer.role !== 'assistant' || answer.status !== 'done') return null;
  const calls = wholeCalls(syntax, answer.content);
  const index = branch.length - 1 - at;
  if (index >= calls.length) return null;
  let rounds = 0;
  for (let i = at; i >= 0 && branch[i]!.role !== 'user'; i--) if (branch[i]!.role === 'assistant') rounds++;
  return rounds > maxRounds ? null : { at, index, call: calls[index]! };
}

/** Whether the branch ends with a result for every call of its last answer, none stopped: the model goes on. */
export function callsAnswered(branch: readonly BranchTurn[], syntax: ToolCallSyntax): boolean {
  let at = branch.length - 1;
  if (branch[at]?.role !== 'tool') return false;
  while (at >= 0 && branch[at]!.role === 'tool') {
    if (branch[at]!.status === 'stopped') return false;
    at--;
  }
  const answer = branch[at];
  if (answer?.role !== 'assistant') return false;
  return wholeCalls(syntax, answer.content).length <= branch.length - 1 - at;
}

/** An answer's calls, but the last when the answer ended inside it (its length limit): that one cannot run. */
function wholeCalls(syntax: ToolCallSyntax, content: string): MessageToolCall[] {
  const { calls, complete } = splitToolCalls(syntax, content);
  return complete ? (calls ?? []) : (calls ?? []).slice(0, -1);
}

/** A call's outcome as its tool message: the text the model gets, and the reason it failed (null: it ran). */
export interface ToolOutcome {
  content: string;
  error: string | null;
}

/** Runs `call` on `server`: a failure (bad arguments, the server's error, a crash, a timeout, garbage) is an outcome, never a throw. */
export async function runToolCall(
  servers: McpServerSet,
  server: string,
  call: MessageToolCall,
  signal?: AbortSignal,
): Promise<ToolOutcome> {
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (err) {
    return failed(`the arguments are not JSON (${(err as Error).message})`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return failed('the arguments must be a JSON object');
  try {
    const result = await servers.call(server, call.name, args as Record<string, unknown>, signal);
    return result.isError
      ? { content: `Error: ${result.text}`, error: result.text || 'the tool failed' }
      : { content: result.text, error: null };
  } catch (err) {
    return failed(`${server}/${call.name}: ${(err as Error).message}`);
  }
}

function failed(reason: string): ToolOutcome {
  return { content: `Error: ${reason}`, error: reason };
}

/** The tool message of a call the user refused. */
export const DENIED: ToolOutcome = { content: 'Error: the user denied this call', error: 'denied by the user' };
