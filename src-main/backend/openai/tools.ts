/**
 * Tool calling on the chat endpoints (OpenAI's and Ollama's): `tools`, `tool_choice` and
 * `parallel_tool_calls` checked (each mistake a 400 naming its field), the prompt given the
 * tools, and the answer split into content and calls in the model's own syntax
 * (core/tool-calls). A call the client requires is held to the functions' schemas.
 */
import { randomBytes } from 'node:crypto';
import type { ChatTool } from '../../core/chat-template';
import type { JsonConstraint } from '../../core/constrained/token-constraint';
import {
  forcedToolCall,
  functionAt,
  templateTools,
  ToolCallStream,
  toolFunctions,
  ToolsProblem,
  type ParsedToolCall,
  type ToolCallDelta,
  type ToolFunction,
} from '../../core/tool-calls/index';
import type { ModelText } from '../chat/prompt';
import { isRecord } from '../chat/settings';
import { invalidParam } from './errors';
import { RequestFields } from './request-fields';
import { schemaConstraint } from './schema-constraint';

export interface ToolRequest {
  /** As the template reads them: { type: "function", function: { name, description, parameters } }. */
  tools: ChatTool[];
  functions: ToolFunction[];
  /** "auto": the model chooses; "required": some call; a name: that function. */
  choice: 'auto' | 'required' | { name: string };
  /** More than one call per answer (parallel_tool_calls, default true). */
  parallel: boolean;
}

/** Where a request keeps its tools' fields, for reading them and naming them in errors. */
export interface ToolFields {
  /** The Responses API's shape: a function's fields on the tool (`tools[0].name`), a named choice { "type": "function", "name" }. */
  flat: boolean;
  /** The field that asked for JSON output, if any (it cannot go with a required call). */
  format: string | null;
}

/** `tools` and `tool_choice` of a request; null when it offers none or tool_choice is "none". */
export function parseTools(
  f: RequestFields,
  fields: ToolFields = { flat: false, format: f.has('response_format') ? 'response_format' : null },
): ToolRequest | null {
  const parallel = f.boolean('parallel_tool_calls', true);
  if (!f.has('tools')) {
    if (f.has('tool_choice') && f.body.tool_choice !== 'none' && f.body.tool_choice !== 'auto') {
      throw invalidParam('tool_choice', '"tool_choice" asks for a call, but the request has no "tools"');
    }
    return null;
  }
  const functions = checkedFunctions(f.body.tools, fields.flat);
  if (functions.length === 0) return null;
  const choice = toolChoice(f.body.tool_choice, new Set(functions.map((fn) => fn.name)), fields.flat);
  if (choice === 'none') return null;
  if (choice !== 'auto') {
    if (fields.format !== null)
      throw invalidParam(
        fields.format,
        `"${fields.format}" cannot go with a required tool call ("tool_choice"): the answer is the call`,
      );
    // A forced call's arguments are held to the schema: one Gufo cannot hold to is a 400 now.
    functions.forEach((fn, i) => {
      const at = `${functionAt(`tools[${i}]`, fields.flat)}.parameters`;
      schemaConstraint(fn.parameters, at, at);
    });
  }
  return { tools: templateTools(functions), functions, choice, parallel };
}

/** A chat's tool choice ("auto", "required", or a function's name, as `gufo chat --tool-choice` takes it) as the API's tool_choice. */
export function toolChoiceField(choice: string): unknown {
  return choice === 'auto' || choice === 'required' ? choice : { type: 'function', function: { name: choice } };
}

/** A chat's tools and tool choice read as a request's (the same checks, the same forced call); null: no tools. */
export function chatToolRequest(tools: readonly ChatTool[], choice: string): ToolRequest | null {
  return parseTools(new RequestFields({ tools, tool_choice: toolChoiceField(choice) }), { flat: false, format: null });
}

/** The functions of a request's `tools`; a mistake is a 400 naming its field. */
function checkedFunctions(list: unknown, flat: boolean): ToolFunction[] {
  try {
    return toolFunctions(list, flat);
  } catch (err) {
    if (err instanceof ToolsProblem) throw invalidParam(err.field, err.message);
    throw err;
  }
}

function toolChoice(value: unknown, names: ReadonlySet<string>, flat: boolean): ToolRequest['choice'] | 'none' {
  if (value === undefined || value === null || value === 'auto') return 'auto';
  if (value === 'none' || value === 'required') return value;
  const named = isRecord(value) && value.type === 'function' ? (flat ? value : value.function) : undefined;
  const name = isRecord(named) ? named.name : undefined;
  if (typeof name !== 'string') {
    const form = flat ? '{ "type": "function", "name" }' : '{ "type": "function", "function": { "name" } }';
    throw invalidParam('tool_choice', `"tool_choice" must be "auto", "none", "required" or ${form}`);
  }
  if (!names.has(name)) throw invalidParam('tool_choice', `"tool_choice" names "${name}", which is not in "tools"`);
  return { name };
}

/** What the prompt and the plan of a request with tools get: the tools, a forced call's marker and schema. */
export interface ToolPrompt {
  tools: ChatTool[];
  prefill: string;
  constraint: JsonConstraint | null;
  answer(): ToolAnswer;
}

export function toolPrompt(text: ModelText, request: ToolRequest): ToolPrompt {
  const { syntax } = text.toolCalls;
  const { choice } = request;
  const allowed =
    typeof choice === 'object' ? request.functions.filter((fn) => fn.name === choice.name) : request.functions;
  const forced = choice === 'auto' ? null : forcedToolCall(syntax.family, allowed, request.parallel);
  return {
    tools: request.tools,
    prefill: forced?.prefill ?? '',
    constraint: forced?.constraint ?? null,
    answer: () => new ToolAnswer(new ToolCallStream(syntax, forced?.opening ?? null), request.parallel),
  };
}

/** A call as the APIs answer it: an id, the function's name, its arguments as JSON text. */
export interface AnsweredToolCall extends ParsedToolCall {
  id: string;
}

/** A piece of a streamed call: the id and name come with its first. */
export interface AnsweredToolCallDelta extends ToolCallDelta {
  id?: string;
}

/** An answer's text as it streams, split into the content to show and the calls (only the first unless parallel). */
export class ToolAnswer {
  /** The calls' ids, by index, given as each call starts. */
  readonly #ids: string[] = [];

  constructor(
    private readonly stream: ToolCallStream,
    private readonly parallel: boolean,
  ) {}

  /** Adds answer text; answers the content that may be shown now. */
  push(text: string): string {
    return this.pushPiece(text).content;
  }

  /** Adds answer text; answers the content that may be shown now and the new pieces of calls. */
  pushPiece(text: string): { content: string; calls: AnsweredToolCallDelta[] } {
    const piece = this.stream.push(text);
    return { content: piece.content, calls: this.#answered(piece.calls) };
  }

  /** The answer ended: the rest of its content, the calls' last pieces, and the calls with ids. */
  end(): { content: string; calls: AnsweredToolCall[] | null; complete: boolean; deltas: AnsweredToolCallDelta[] } {
    const split = this.stream.end();
    const deltas = this.#answered(split.deltas);
    if (!split.calls) return { content: split.content, calls: null, complete: split.complete, deltas };
    const calls = this.parallel ? split.calls : split.calls.slice(0, 1);
    return {
      content: split.content,
      calls: calls.map((c, index) => ({ id: this.#id(index), ...c })),
      complete: split.complete,
      deltas,
    };
  }

  #answered(deltas: readonly ToolCallDelta[]): AnsweredToolCallDelta[] {
    return deltas
      .filter((d) => this.parallel || d.index === 0)
      .map((d) => (d.name === undefined ? d : { ...d, id: this.#id(d.index) }));
  }

  #id(index: number): string {
    return (this.#ids[index] ??= toolCallId());
  }
}

/** OpenAI's form of call ids. */
export function toolCallId(): string {
  return `call_${randomBytes(12).toString('base64url')}`;
}
