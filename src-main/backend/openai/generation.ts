/**
 * One generation for an API request: after the model's earlier requests, on an engine that has the
 * model loaded (loaded now if need be), streamed through OutputText, its leading reasoning split
 * from the content when asked (core/reasoning.ts). A client that leaves (its `signal` aborts) is
 * dropped from the queue, or its generation cancelled within one token.
 */
import { ReasoningSplitter } from '../../core/reasoning';
import type { JsonConstraint, SamplingParams } from '../../engine-wire/protocol';
import type { ModelText } from '../chat/prompt';
import type { EnginePool } from '../engine-pool';
import type { ServerMetrics } from './metrics';
import type { ServedModel } from './model-ids';
import { OutputText, type Piece } from './output-text';
import type { TokenChoice } from './logprobs';
import type { ModelQueues } from './queue';

export interface GenerationDeps {
  engines: EnginePool;
  queues: ModelQueues;
  metrics: ServerMetrics;
}

export interface GenerationPlan {
  model: ServedModel;
  /** The context the model is loaded with. */
  contextSize: number;
  /** Token ids, BOS included when the model wants one; shorter than the context. */
  prompt: number[];
  /** At least 1, and fits the context after the prompt. */
  maxTokens: number;
  sampling: SamplingParams;
  /** Token ids that end the output (not shown). */
  stopIds: readonly number[];
  stopStrings: readonly string[];
  /** Alternatives to report with each token's log-probability; null: no log-probabilities. */
  logprobs: number | null;
  /** Drop the first piece's leading space (an answer), or keep it (a continuation of the prompt). */
  stripLeadingSpace: boolean;
  /** JSON mode: the engine samples only tokens that keep the output valid JSON; null: free text. */
  constraint: JsonConstraint | null;
  /** Tool-call markers that are control tokens are shown in the text (for the tool-call parser). */
  showToolMarkers: boolean;
  /** How long the model stays loaded after this generation (Ollama's keep_alive; see LoadSpec.keepAliveMs). */
  keepAliveMs?: number | null;
  /** Split the answer's leading reasoning from its content; `opened`: the prompt ended inside the block. Null: all text is content. */
  reasoning: { opened: boolean } | null;
}

/** Output to send now: the content in `text`, the reasoning apart (empty unless the plan splits it). */
export interface GeneratedPiece extends Piece {
  reasoning: string;
}

export type FinishReason = 'stop' | 'length';

export interface Generated {
  /** The content. */
  text: string;
  /** The reasoning, when the plan splits it (else ''). */
  reasoning: string;
  /** Of the completion's tokens, those that wrote the reasoning (its tags included). */
  reasoningTokens: number;
  tokens: TokenChoice[];
  /** Where each token's text starts in the output (`text`, when the reasoning is not split). */
  offsets: number[];
  finishReason: FinishReason;
  /** The stop string that ended it; null: an end-of-generation token, the length limit or none. */
  stopWord: string | null;
  promptTokens: number;
  /** Of the prompt's tokens, those a slot's KV cache already held (not evaluated again). */
  cachedTokens: number;
  completionTokens: number;
  /** Where the time went (Ollama's replies report it): loading the model (null: it was loaded), to the first token, decoding. */
  durations: { loadMs: number | null; ttftMs: number; decodeMs: number };
}

/**
 * Generates `plan` with the model's tokenizer `text`; `onPiece` gets the output as it may be
 * shown. Resolves with null when the client left.
 */
export function generate(
  deps: GenerationDeps,
  text: ModelText,
  plan: GenerationPlan,
  signal: AbortSignal,
  onPiece?: (piece: GeneratedPiece) => void,
): Promise<Generated | null> {
  const { model } = plan;
  return deps.queues.run(model.id, async () => {
    if (signal.aborted) return null;
    const spec = { path: model.entry.path, ctx: plan.contextSize, keepAliveMs: plan.keepAliveMs };
    return deps.engines.withModel(spec, async ({ host, loadMs }) => {
      if (loadMs !== null) deps.metrics.loaded(model.id, loadMs);
      if (signal.aborted) return null;
      const output = new OutputText(
        text.answerDecoder(plan.stripLeadingSpace, plan.showToolMarkers),
        plan.stopStrings,
        plan.logprobs ?? 0,
      );
      const splitter = plan.reasoning ? new ReasoningSplitter(plan.reasoning.opened) : null;
      let content = '';
      let reasoning = '';
      let reasoningTokens = 0;
      const emit = (piece: Piece, last = false) => {
        const split = splitter?.push(piece.text) ?? { reasoning: '', content: piece.text };
        // A token belongs to the reasoning when the output still is reasoning once its text is in.
        if (splitter?.reasoning) reasoningTokens += piece.tokens.length;
        if (last && splitter) {
          const rest = splitter.end();
          split.reasoning += rest.reasoning;
          split.content += rest.content;
        }
        content += split.content;
        reasoning += split.reasoning;
        if (split.content !== '' || split.reasoning !== '' || piece.tokens.length > 0)
          onPiece?.({ ...piece, text: split.content, reasoning: split.reasoning });
      };
      const stopIds = new Set(plan.stopIds);
      const cut = new AbortController();
      const result = await host.generate(
        {
          prompt: plan.prompt,
          maxTokens: plan.maxTokens,
          sampling: plan.sampling,
          stop: [...plan.stopIds],
          ...(plan.constraint ? { constraint: plan.constraint } : {}),
          // At least one: the engine reports the chosen token's own log-probability only with a top list.
          topLogprobs: plan.logprobs === null ? 0 : Math.max(1, plan.logprobs),
        },
        {
          signal: AbortSignal.any([signal, cut.signal]),
          onToken: (e) => {
            if (output.stopped || stopIds.has(e.token)) return;
            emit(output.push(e.token, e.logprob, e.top));
            if (output.stopped) cut.abort();
          },
        },
      );
      const t = result.timings;
      // Counted even for a client that left: the engine did the work.
      deps.metrics.generated({
        model: model.id,
        promptTokens: plan.prompt.length,
        completionTokens: t.generated,
        ttftMs: t.ttftMs,
        prefillTokS: t.prefillTokS,
        decodeTokS: t.decodeTokS,
      });
      if (signal.aborted) return null;
      emit(output.end(), true);
      return {
        text: content,
        reasoning,
        reasoningTokens,
        ...output.tokens,
        finishReason: output.stopped || result.stopReason === 'stop' ? 'stop' : 'length',
        stopWord: output.stopWord,
        promptTokens: plan.prompt.length,
        cachedTokens: t.cachedTokens,
        completionTokens: t.generated,
        durations: { loadMs, ttftMs: t.ttftMs, decodeMs: t.decodeMs },
      };
    });
  });
}
