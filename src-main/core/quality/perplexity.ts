/**
 * Perplexity windows as llama.cpp's llama-perplexity lays them out (tools/perplexity, `perplexity()`):
 *
 * - the text is tokenized with BOS when the vocabulary adds one (llama.cpp's add_special);
 * - it is cut into consecutive chunks of `ctx` tokens; tokens after the last whole chunk are not used;
 * - each chunk is evaluated from an empty KV cache with its first token replaced by BOS (when the
 *   vocabulary adds BOS);
 * - only the second half of a chunk is scored: the logits at positions first = floor(ctx/2) …
 *   ctx−2 predict the tokens at first+1 … ctx−1, so ctx − 1 − floor(ctx/2) tokens per chunk.
 *
 * One exception, where llama.cpp refuses texts shorter than 2·ctx: a text that fits in one window
 * is evaluated whole, and every token after the first (BOS) is scored.
 */

/** Bad input for a quality measurement: says what is wrong. */
export class QualityError extends Error {
  override readonly name = 'QualityError';
}

/** Token ids evaluated from position 0; the logits at positions first … ids.length−2 are scored. */
export interface EvalWindow {
  readonly ids: readonly number[];
  readonly first: number;
}

export interface WindowPlan {
  readonly windows: readonly EvalWindow[];
  /** Tokens of the text, BOS included. */
  readonly tokens: number;
  /** Positions scored over all windows. */
  readonly scored: number;
  /** The longest window: the context the model needs. */
  readonly ctx: number;
}

/** How many next-token predictions a window scores. */
export function scoredIn(window: EvalWindow): number {
  return window.ids.length - 1 - window.first;
}

/**
 * The windows over `tokens` (the text's ids, BOS first when the vocabulary adds it) for a context of
 * `ctx`; `bos` is the id that starts each chunk, or null when the vocabulary adds no BOS.
 */
export function perplexityWindows(tokens: readonly number[], ctx: number, bos: number | null): WindowPlan {
  if (tokens.length < 2) {
    throw new QualityError(
      `the text gives ${tokens.length} token${tokens.length === 1 ? '' : 's'}${bos !== null ? ' (BOS included)' : ''}; at least 2 are needed to score one`,
    );
  }
  if (!Number.isSafeInteger(ctx) || ctx < 2)
    throw new QualityError(`the context must be at least 2 tokens, not ${ctx}`);
  if (tokens.length <= ctx) {
    return {
      windows: [{ ids: tokens, first: 0 }],
      tokens: tokens.length,
      scored: tokens.length - 1,
      ctx: tokens.length,
    };
  }
  const first = Math.floor(ctx / 2);
  if (ctx - 1 - first < 1) {
    throw new QualityError(
      `a context of ${ctx} tokens scores no token of a text longer than it (${tokens.length} tokens); use a context of at least 3`,
    );
  }
  const windows: EvalWindow[] = [];
  for (let start = 0; start + ctx <= tokens.length; start += ctx) {
    const ids = tokens.slice(start, start + ctx);
    if (bos !== null) ids[0] = bos;
    windows.push({ ids, first });
  }
  return { windows, tokens: tokens.length, scored: windows.length * (ctx - 1 - first), ctx };
}

/** exp(mean negative log-likelihood). */
export function perplexityOf(nllSum: number, count: number): number {
  return Math.exp(nllSum / count);
}
