/**
 * An answer generated up to its length limit across a full context: when the context fills
 * before the limit, the policy's next prompt (the conversation with more left out, then the
 * answer so far) lets it go on; without one it ends with 'context'. The chat's answers and
 * `gufo chat` both write answers through it.
 */
import type { GenerationStats } from '../../../src-preload/api';
import type { EngineHost } from '../../engine-wire/host';
import type { JsonConstraint } from '../../core/constrained/token-constraint';
import type { GenerateResult, SamplingParams } from '../../engine-wire/protocol';
import type { PromptPlan } from './prompt';

export interface FillOptions {
  contextSize: number;
  /** The answer's length limit, over every part. */
  maxTokens: number;
  sampling: SamplingParams;
  stop: number[];
  /** What the output is held to (a required tool call's schema). */
  constraint?: JsonConstraint | null;
  signal?: AbortSignal;
  /**
   * Each token of the answer, with how many the answer has so far (it included) and how many of
   * the prompt's tokens are the conversation's (the rest are the answer's earlier parts).
   */
  onToken: (token: number, count: number, conversationTokens: number) => void;
  /** The prompt to go on from, ending with `answer`; null: the policy leaves nothing out ('stop'). A plan that does not fit ends the answer. */
  replan: ((answer: readonly number[]) => PromptPlan | Promise<PromptPlan>) | null;
}

export interface Filled {
  /** The last part's result (its timings). */
  result: GenerateResult;
  stopReason: GenerationStats['stopReason'];
  /** The last part's prompt. */
  plan: PromptPlan;
  /** The answer's ids, over every part. */
  answer: number[];
  /** Time to the first token of the first part. */
  ttftMs: number;
}

export async function fillContext(host: EngineHost, first: PromptPlan, o: FillOptions): Promise<Filled> {
  const answer: number[] = [];
  let plan = first;
  let ttftMs = 0;
  for (;;) {
    const budget = o.maxTokens - answer.length;
    const room = o.contextSize - plan.ids.length;
    const before = answer.length;
    const conversationTokens = plan.ids.length - before;
    const result = await host.generate(
      {
        prompt: plan.ids,
        maxTokens: Math.min(budget, room),
        sampling: o.sampling,
        stop: o.stop,
        ...(o.constraint && { constraint: o.constraint }),
      },
      {
        ...(o.signal && { signal: o.signal }),
        onToken: (e) => {
          answer.push(e.token);
          o.onToken(e.token, answer.length, conversationTokens);
        },
      },
    );
    if (before === 0) ttftMs = result.timings.ttftMs;
    // The engine is asked for no more than the context holds: stopping there is the context's end,
    // even when the length limit falls on the same token (then it ends the answer only if a policy could go on).
    const filled =
      result.stopReason === 'context' ||
      (result.stopReason === 'length' && room <= budget && answer.length - before >= room);
    if (!filled) return { result, stopReason: result.stopReason, plan, answer, ttftMs };
    if (!o.replan || o.signal?.aborted) return { result, stopReason: 'context', plan, answer, ttftMs };
    if (answer.length >= o.maxTokens) return { result, stopReason: 'length', plan, answer, ttftMs };
    const next = await o.replan(answer);
    if (!next.fits || o.signal?.aborted) return { result, stopReason: 'context', plan, answer, ttftMs };
    plan = next;
  }
}
