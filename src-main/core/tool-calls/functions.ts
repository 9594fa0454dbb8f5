/**
 * OpenAI's `tools` list checked: each entry { type: "function", function: { name, description,
 * parameters } }, names unique. One check for the server's requests and a chat's settings; each
 * mistake names its field ("tools[0].function.name").
 */
import { isObject as isRecord } from './call-scan';
import type { ToolFunction } from './forced';

/** The most functions one list may offer. */
const MAX_TOOLS = 128;

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** A mistake in a `tools` list: `field` is where ("tools[2].function.parameters"). */
export class ToolsProblem extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The functions of `list` (an OpenAI `tools` list); a ToolsProblem names the first mistake. */
export function toolFunctions(list: unknown): ToolFunction[] {
  if (!Array.isArray(list) || list.length > MAX_TOOLS)
    throw new ToolsProblem('tools', `"tools" must be a list of at most ${MAX_TOOLS} functions`);
  const functions = list.map((tool: unknown, i) => toolFunction(tool, `tools[${i}]`));
  const names = new Set<string>();
  functions.forEach((fn, i) => {
    if (names.has(fn.name))
      throw new ToolsProblem(`tools[${i}].function.name`, `tools[${i}].function.name: "${fn.name}" is offered twice`);
    names.add(fn.name);
  });
  return functions;
}

function toolFunction(tool: unknown, at: string): ToolFunction {
  if (!isRecord(tool) || tool.type !== 'function' || !isRecord(tool.function)) {
    throw new ToolsProblem(
      at,
      `${at} must be { "type": "function", "function": { "name", "description", "parameters" } }`,
    );
  }
  const fn = tool.function;
  if (typeof fn.name !== 'string' || !NAME.test(fn.name)) {
    throw new ToolsProblem(
      `${at}.function.name`,
      `${at}.function.name must be 1 to 64 letters, digits, "_", "." or "-"`,
    );
  }
  if (fn.description !== undefined && fn.description !== null && typeof fn.description !== 'string') {
    throw new ToolsProblem(`${at}.function.description`, `${at}.function.description must be text`);
  }
  const parameters = fn.parameters ?? { type: 'object', properties: {} };
  if (!isRecord(parameters))
    throw new ToolsProblem(`${at}.function.parameters`, `${at}.function.parameters must be a JSON Schema object`);
  return { name: fn.name, ...(typeof fn.description === 'string' ? { description: fn.description } : {}), parameters };
}

/** A function as the chat template reads it (a type, not an interface, so that it is a ChatTool). */
export type FunctionTool = { type: 'function'; function: ToolFunction };

/** `functions` as the chat template reads them: { type: "function", function: { name, description, parameters } }. */
export function templateTools(functions: readonly ToolFunction[]): FunctionTool[] {
  return functions.map((fn) => ({ type: 'function', function: fn }));
}
