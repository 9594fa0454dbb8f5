/**
 * Log-probabilities in OpenAI's shapes. The engine reports, per generated token, its own
 * natural-log probability and the most likely tokens' in the raw distribution (before
 * temperature and filters); OpenAI's logprobs are of that same distribution.
 */
import type { Tokenizer } from '../../core/tokenizer/index';

/** One generated token with its log-probability and the alternatives the client asked for. */
export interface TokenChoice {
  id: number;
  logprob: number;
  /** [id, log-probability], most likely first. */
  top: [number, number][];
}

/** The chosen token `id` with its log-probability (the engine's, true even outside the top list) and the first `shown` alternatives. */
export function tokenChoice(id: number, logprob: number, top: readonly [number, number][], shown: number): TokenChoice {
  return { id, logprob, top: top.slice(0, shown) };
}

/** The bytes a token stands for, and their text (U+FFFD where they hold part of a character). */
function tokenText(tokenizer: Tokenizer, id: number): { token: string; bytes: number[] } {
  const bytes = tokenizer.tokenToPiece(id, { renderSpecial: true });
  return { token: new TextDecoder().decode(bytes), bytes: [...bytes] };
}

/** `choices[].logprobs.content` of a chat completion (or of one chunk). */
export function chatLogprobContent(tokenizer: Tokenizer, tokens: readonly TokenChoice[]) {
  return tokens.map((t) => ({
    ...tokenText(tokenizer, t.id),
    logprob: t.logprob,
    top_logprobs: t.top.map(([id, logprob]) => ({ ...tokenText(tokenizer, id), logprob })),
  }));
}

/**
 * `choices[].logprobs` of a (legacy) completion: parallel lists, the alternatives as
 * { text: logprob } (the first, most likely, kept when two texts are the same). `offsets`: where
 * each token's text starts in the completion's text.
 */
export function completionLogprobs(tokenizer: Tokenizer, tokens: readonly TokenChoice[], offsets: readonly number[]) {
  return {
    tokens: tokens.map((t) => tokenText(tokenizer, t.id).token),
    token_logprobs: tokens.map((t) => t.logprob),
    top_logprobs: tokens.map((t) => {
      const top: Record<string, number> = {};
      for (const [id, logprob] of t.top) {
        const { token } = tokenText(tokenizer, id);
        if (!Object.hasOwn(top, token)) top[token] = logprob;
      }
      return top;
    }),
    text_offset: [...offsets],
  };
}
