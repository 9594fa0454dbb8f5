/**
 * OpenAI's `tools` list checked: each entry { type: "function", function: { name, description,
 * parameters } } (the Responses API writes the function's fields on the entry itself), names
 * unique. One check for the server's requests and a chat's settings; each mistake names its field
 * ("tools[0].function.name").
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

/**
 * The functions of `list` (an OpenAI `tools` list); a ToolsProblem names the first mistake. `flat`:
 * the Responses API's shape, { "type": "function", "name", "description", "parameters" }.
 */
export function toolFunctions(list: unknown, flat = false): ToolFunction[] {
  if (!Array.isArray(list) || list.length > MAX_TOOLS)
    throw new ToolsProblem('tools', `"tools" must be a list of at most ${MAX_TOOLS} functions`);
  const functions = list.map((tool: unknown, i) => toolFunction(tool, `tools[${i}]`, flat));
  const names = new Set<string>();
  functions.forEach((fn, i) => {
    const at = `${functionAt(`tools[${i}]`, flat)}.name`;
    if (names.has(fn.name)) throw new ToolsProblem(at, `${at}: "${fn.name}" is offered twice`);
    names.add(fn.name);
  });
  return functions;
}

/** Where a tool's function fields are: `tools[i].function`, or the tool itself in the Responses API. */
export function functionAt(tool: string, flat: boolean): string {
  return flat ? tool : `${tool}.function`;
}

function toolFunction(tool: unknown, at: string, flat: boolean): ToolFunction {
  const fn = isRecord(tool) && tool.type === 'function' ? (flat ? tool : tool.function) : undefined;
  if (!isRecord(fn)) {
    throw new ToolsProblem(
      at,
      flat
        ? `${at} must be { "type": "function", "name", "description", "parameters" }: Gufo serves function tools only`
        : `${at} must be { "type": "function", "function": { "name", "description", "parameters" } }`,
    );
  }
  const here = functionAt(at, flat);
  if (typeof fn.name !== 'string' || !NAME.test(fn.name)) {
    throw new ToolsProblem(`${here}.name`, `${here}.name must be 1 to 64 letters, digits, "_", "." or "-"`);
  }
  if (fn.description !== undefined && fn.description !== null && typeof fn.description !== 'string') {
    throw new ToolsProblem(`${here}.description`, `${here}.description must be text`);
  }
  const parameters = fn.parameters ?? { type: 'object', properties: {} };
  if (!isRecord(parameters))
    throw new ToolsProblem(`${here}.parameters`, `${here}.parameters must be a JSON Schema object`);
  return { name: fn.name, ...(typeof fn.description === 'string' ? { description: fn.description } : {}), parameters };
}

/** A function as the chat template reads it (a type, not an interface, so that it is a ChatTool). */
export type FunctionTool = { type: 'function'; function: ToolFunction };

/** `functions` as the chat template reads them: { type: "function", function: { name, description, parameters } }. */
export function templateTools(functions: readonly ToolFunction[]): FunctionTool[] {
  return functions.map((fn) => ({ type: 'function', function: fn }));
}
