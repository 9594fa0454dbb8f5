/**
 * A tool call the model must make (tool_choice "required" or a named function), with arguments
 * that are valid for the function's schema: the prompt ends with the family's call marker, and
 * the output is held, token by token, to one JSON Schema (core/constrained) that joins the
 * allowed functions: { "name": one of them, "arguments": that function's parameters }.
 */
import { HARMONY_CALL_MARKER } from '../harmony';
import type { ToolCallFamily } from './syntax';

/** A function the model may call, as the request gave it. */
export interface ToolFunction {
  name: string;
  description?: string;
  /** A JSON Schema for the arguments (an object). */
  parameters: Record<string, unknown>;
}

export interface ForcedToolCall {
  /** Text appended to the prompt after the assistant turn's header: the call's marker. */
  prefill: string;
  /** The JSON Schema the output is held to. */
  schema: Record<string, unknown>;
  /** The prefill in the syntax's form: the output is read as calls after it (tool-calls/stream.ts). */
  opening: string;
}

/** The most calls one forced answer may make when parallel calls are allowed (a Mistral list). */
export const MAX_FORCED_CALLS = 8;

/**
 * The forced call of `family` among `functions` (one or more), or null when the family cannot
 * be forced with one schema (gpt-oss's and Mistral v11's calls name the function outside their JSON: only one function can be forced).
 */
export function forcedToolCall(family: ToolCallFamily, functions: readonly ToolFunction[], parallel: boolean): ForcedToolCall | null {
  const argumentsKey = family === 'llama3' ? 'parameters' : 'arguments';
  const oneCall = {
    anyOf: functions.map((f) => ({
      type: 'object',
      properties: { name: { const: f.name }, [argumentsKey]: f.parameters },
      required: ['name', argumentsKey],
      additionalProperties: false,
    })),
  };
  switch (family) {
    case 'hermes':
      return { prefill: '<tool_call>\n', schema: oneCall, opening: '<tool_call>\n' };
    case 'llama3':
      return { prefill: '', schema: oneCall, opening: '' };
    case 'mistral':
      return {
        prefill: '[TOOL_CALLS]',
        schema: { type: 'array', items: oneCall, minItems: 1, maxItems: parallel ? MAX_FORCED_CALLS : 1 },
        opening: '[TOOL_CALLS]',
      };
    case 'mistral-v11': {
      // The name stands before [ARGS], outside the JSON: only one function can be forced.
      if (functions.length !== 1) return null;
      const opening = `[TOOL_CALLS]${functions[0]!.name}[ARGS]`;
      return { prefill: opening, schema: functions[0]!.parameters, opening };
    }
    case 'harmony': {
      if (functions.length !== 1) return null;
      const f = functions[0]!;
      return {
        prefill: `<|channel|>commentary to=functions.${f.name} <|constrain|>json<|message|>`,
        schema: f.parameters,
        // As the harmony rewriter shows the prefill.
        opening: `${HARMONY_CALL_MARKER}${f.name}<|message|>`,
      };
    }
  }
}
