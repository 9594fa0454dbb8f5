/**
 * How far a model's next-token distributions lie from a base model's over the same text: the
 * figures llama-perplexity --kl-divergence reports, computed over the full vocabulary in float64.
 *
 * Per scored position: KL(base ‖ model) = Σ p_base·(ln p_base − ln p_model); whether both rank the
 * same token first; Δp = p_model(t) − p_base(t) for t the base's most likely token (and, as
 * llama.cpp's Δp, for t the text's next token); the negative log-likelihood of the next token.
 */
import type { Vocab } from '../tokenizer/vocab';
import { perplexityOf, QualityError } from './perplexity';

/** Figures of one evaluated window, one entry per scored position. */
export interface WindowScores {
  /** −ln p(next token of the text). */
  nll: number[];
  /** Against a base model's log-probabilities at the same positions. */
  comparison?: WindowComparison;
}

export interface WindowComparison {
  kl: number[];
  sameTop: boolean[];
  /** p(t) − p_base(t), t the base's most likely token. */
  deltaP: number[];
  /** p(t) − p_base(t), t the text's next token (llama.cpp's Δp). */
  deltaPNext: number[];
}

export interface PositionComparison {
  kl: number;
  sameTop: boolean;
  deltaP: number;
  deltaPNext: number;
}

export interface DivergenceSummary {
  /** Mean KL(base ‖ model) in nats. */
  meanKl: number;
  /** 99th percentile of the per-position KL, interpolated as llama.cpp does. */
  p99Kl: number;
  maxKl: number;
  /** Fraction of positions where both models rank the same token first. */
  top1: number;
  /** Mean Δp of the base's most likely token. */
  meanDeltaP: number;
  /** Mean Δp of the text's next token (what llama.cpp reports as "Mean Δp"). */
  meanDeltaPNext: number;
  pplBase: number;
  pplQuant: number;
  positions: number;
}

/** Natural-log probabilities of f32 logits, in float64. */
export function logSoftmax(logits: ArrayLike<number>, out = new Float64Array(logits.length)): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  const logZ = max + Math.log(sum);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i]! - logZ;
  return out;
}

/** Compares one position: `base` and `model` are log-probabilities over the same vocabulary, `next` the text's next token. */
export function comparePosition(base: ArrayLike<number>, model: ArrayLike<number>, next: number): PositionComparison {
  let kl = 0;
  let topBase = 0;
  let topModel = 0;
  for (let i = 0; i < base.length; i++) {
    const lb = base[i]!;
    if (lb > base[topBase]!) topBase = i;
    if (model[i]! > model[topModel]!) topModel = i;
    // A token the base never picks adds nothing, even where the model gives it no probability either.
    const p = Math.exp(lb);
    if (p > 0) kl += p * (lb - model[i]!);
  }
  const deltaAt = (t: number) => Math.exp(model[t]!) - Math.exp(base[t]!);
  return { kl, sameTop: topBase === topModel, deltaP: deltaAt(topBase), deltaPNext: deltaAt(next) };
}

/** The value at `fraction` of ascending `sorted`, linearly interpolated (llama-perplexity's percentile). */
export function percentile(sorted: ArrayLike<number>, fraction: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  if (fraction <= 0) return sorted[0]!;
  if (fraction >= 1) return sorted[n - 1]!;
  const p = fraction * (n - 1);
  const i = Math.floor(p);
  const t = p - i;
  return (1 - t) * sorted[i]! + t * sorted[Math.min(i + 1, n - 1)]!;
}

/** Collects the base run's and the compared run's window figures, then sums them up. */
export class DivergenceStats {
  private readonly kl: number[] = [];
  private nllBase = 0;
  private basePositions = 0;
  private nllModel = 0;
  private sameTop = 0;
  private deltaP = 0;
  private deltaPNext = 0;

  addBase(scores: WindowScores): void {
    for (const v of scores.nll) this.nllBase += v;
    this.basePositions += scores.nll.length;
  }

  addCompared(scores: WindowScores): void {
    const c = scores.comparison;
    if (!c) throw new QualityError('a compared window came without its comparison to the base');
    for (let i = 0; i < scores.nll.length; i++) {
      this.nllModel += scores.nll[i]!;
      this.kl.push(c.kl[i]!);
      if (c.sameTop[i]) this.sameTop++;
      this.deltaP += c.deltaP[i]!;
      this.deltaPNext += c.deltaPNext[i]!;
    }
  }

  summary(): DivergenceSummary {
    const n = this.kl.length;
    if (n === 0 || n !== this.basePositions) {
      throw new QualityError(
        `the base scored ${this.basePositions} positions and the compared model ${n}; both must score the same ones`,
      );
    }
    const sorted = Float64Array.from(this.kl).sort();
    return {
      meanKl: this.kl.reduce((a, b) => a + b, 0) / n,
      p99Kl: percentile(sorted, 0.99),
      maxKl: sorted[n - 1]!,
      top1: this.sameTop / n,
      meanDeltaP: this.deltaP / n,
      meanDeltaPNext: this.deltaPNext / n,
      pplBase: perplexityOf(this.nllBase, n),
      pplQuant: perplexityOf(this.nllModel, n),
      positions: n,
    };
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Why `other` cannot be compared with `base` token by token (naming both files), or null when their vocabularies agree. */
export function vocabularyMismatch(base: Vocab, other: Vocab): string | null {
  const differ = (what: string) =>
    `${other.file}: ${what} (the base ${base.file} differs); KL divergence needs the same vocabulary`;
  if (base.tokens.length !== other.tokens.length)
    return differ(`its vocabulary has ${other.tokens.length} tokens, not ${base.tokens.length}`);
  for (let i = 0; i < base.tokens.length; i++) {
    if (!sameBytes(base.tokens.bytesAt(i), other.tokens.bytesAt(i))) {
      return differ(`token ${i} is ${JSON.stringify(other.tokens.at(i))}, not ${JSON.stringify(base.tokens.at(i))}`);
    }
  }
  if (base.bos !== other.bos || base.addBos !== other.addBos) {
    return differ(`BOS is ${other.addBos ? other.bos : 'not added'}, not ${base.addBos ? base.bos : 'not added'}`);
  }
  return null;
}
