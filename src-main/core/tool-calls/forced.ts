/**
 * A tool call the model must make (tool_choice "required" or a named function), with arguments
 * that are valid for the function's schema: the prompt ends with the family's call marker, and
 * the output is held, token by token, to one JSON Schema (core/constrained) that joins the
 * allowed functions: { "name": one of them, "arguments": that function's parameters }. Where the
 * name stands outside the JSON (gpt-oss, Mistral v11), the output is one function's name and the
 * family's separator, then that function's arguments (a lead-json-schema constraint).
 */
import type { JsonConstraint } from '../constrained/token-constraint';
import { ORDERED_KEYWORD } from '../constrained/json-schema';
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
  /** What the output is held to. */
  constraint: JsonConstraint;
  /** The prefill in the syntax's form: the output is read as calls after it (tool-calls/stream.ts); null: the output opens its call itself. */
  opening: string | null;
}

/** The most calls one forced answer may make when parallel calls are allowed (a Mistral list). */
export const MAX_FORCED_CALLS = 8;

/** The forced call of `family` among `functions` (one or more). */
export function forcedToolCall(
  family: ToolCallFamily,
  functions: readonly ToolFunction[],
  parallel: boolean,
): ForcedToolCall {
  const argumentsKey = family === 'llama3' ? 'parameters' : 'arguments';
  const oneCall = {
    anyOf: functions.map((f) => ({
      type: 'object',
      properties: { name: { const: f.name }, [argumentsKey]: f.parameters },
      required: ['name', argumentsKey],
      additionalProperties: false,
      // The name first, then the arguments (as llama.cpp's grammars write a call).
      [ORDERED_KEYWORD]: true,
    })),
  };
  const schema = (s: Record<string, unknown>): JsonConstraint => ({ kind: 'json-schema', schema: s });
  /** Each function's name with the text that ends it, then its arguments. */
  const named = (lead: (name: string) => string): JsonConstraint => ({
    kind: 'lead-json-schema',
    leads: functions.map((f) => ({ text: lead(f.name), schema: f.parameters })),
  });
  switch (family) {
    case 'hermes':
      return { prefill: '<tool_call>\n', constraint: schema(oneCall), opening: '<tool_call>\n' };
    case 'llama3':
      return { prefill: '', constraint: schema(oneCall), opening: '' };
    case 'mistral':
      return {
        prefill: '[TOOL_CALLS]',
        constraint: schema({ type: 'array', items: oneCall, minItems: 1, maxItems: parallel ? MAX_FORCED_CALLS : 1 }),
        opening: '[TOOL_CALLS]',
      };
    case 'mistral-v11': {
      // The name stands before [ARGS], outside the JSON; one call (the output ends after its arguments).
      if (functions.length > 1)
        return { prefill: '[TOOL_CALLS]', constraint: named((name) => `${name}[ARGS]`), opening: '[TOOL_CALLS]' };
      const opening = `[TOOL_CALLS]${functions[0]!.name}[ARGS]`;
      return { prefill: opening, constraint: schema(functions[0]!.parameters), opening };
    }
    case 'harmony': {
      if (functions.length > 1) {
        // The recipient is generated, so the harmony rewriter reads it from the header as in any call.
        return {
          prefill: '<|channel|>commentary ',
          constraint: named((name) => `${HARMONY_CALL_MARKER}${name} <|constrain|>json<|message|>`),
          opening: null,
        };
      }
      const f = functions[0]!;
      return {
        prefill: `<|channel|>commentary ${HARMONY_CALL_MARKER}${f.name} <|constrain|>json<|message|>`,
        constraint: schema(f.parameters),
        // As the harmony rewriter shows the prefill.
        opening: `${HARMONY_CALL_MARKER}${f.name}<|message|>`,
      };
    }
  }
}
