/**
 * Tool calling for a model: which syntax its answers use, whether its chat template renders
 * `tools` itself (else fallback.ts describes them), and a decoder that shows the call markers
 * that are control tokens (Llama's <|python_tag|>, Mistral's [TOOL_CALLS] and [ARGS]), which answers
 * otherwise leave out.
 */
import { chatTemplateFor, type ChatVocab } from '../chat-template';
import type { StreamDecoder } from '../tokenizer/index';
import { tokenLookup } from '../tokenizer/vocab';
import { TOOL_CALL_SYNTAX, toolCallFamily, type ToolCallSyntax } from './syntax';

export { forcedToolCall, type ForcedToolCall, type ToolFunction } from './forced';
export { toolTurnsAsText, withToolsInText } from './fallback';
export { functionAt, templateTools, toolFunctions, ToolsProblem } from './functions';
export { splitToolCalls, ToolCallStream, type ToolCallDelta, type ToolCallPiece, type ToolCallSplit } from './stream';
export {
  parseToolCalls,
  TOOL_CALL_SYNTAX,
  type ParsedToolCall,
  type ToolCallFamily,
  type ToolCallSyntax,
} from './syntax';

export interface ModelToolCalls {
  syntax: ToolCallSyntax;
  /** The chat template takes `tools` (else they are described in the system prompt). */
  rendersTools: boolean;
  /** Ids of the markers that are single tokens, with their text. */
  markerTokens: ReadonlyMap<number, string>;
}

export function modelToolCalls(vocab: ChatVocab, architecture: string | null): ModelToolCalls {
  const template = chatTemplateFor(vocab, { architecture });
  const { family, rendersTools } = toolCallFamily(template.text, template.name);
  const syntax = TOOL_CALL_SYNTAX[family];
  const lookup = tokenLookup(vocab);
  const markerTokens = new Map<number, string>();
  for (const marker of [...syntax.markers, ...syntax.innerTokens]) {
    const id = lookup.findText(marker);
    if (id >= 0) markerTokens.set(id, marker);
  }
  return { syntax, rendersTools, markerTokens };
}

/** `decoder` with the model's call-marker tokens shown as their text. */
export function showingMarkers(decoder: StreamDecoder, markerTokens: ReadonlyMap<number, string>): StreamDecoder {
  if (markerTokens.size === 0) return decoder;
  return {
    push: (id) => {
      const marker = markerTokens.get(id);
      return marker === undefined ? decoder.push(id) : decoder.flush() + marker;
    },
    flush: () => decoder.flush(),
  };
}
