/**
 * Plain TypeScript references of the engine's kernels, in double precision, for the kernel tests.
 * Written from the math (and llama.cpp's definitions), independently of the WGSL.
 */
import { f16ToF32 } from '../../src-main/core/quants/half';
import { f32ToF16Bits } from '../../src-main/core/quants/half-encode';

export function rmsNorm(x: Float32Array, w: Float32Array, n: number, eps: number): Float64Array {
  const out = new Float64Array(x.length);
  for (let r = 0; r < x.length / n; r++) {
    let ss = 0;
    for (let i = 0; i < n; i++) ss += x[r * n + i]! ** 2;
    const scale = 1 / Math.sqrt(ss / n + eps);
    for (let i = 0; i < n; i++) out[r * n + i] = x[r * n + i]! * scale * w[i]!;
  }
  return out;
}

/** RoPE of rows [token][head][headDim] with the angles of `table` (see ropeTable). */
export function rope(
  x: Float32Array,
  table: Float32Array,
  o: { pos0: number; nTokens: number; nHeads: number; headDim: number; nRot: number; neox: boolean },
): Float64Array {
  const out = Float64Array.from(x);
  const half = o.nRot / 2;
  for (let t = 0; t < o.nTokens; t++) {
    for (let h = 0; h < o.nHeads; h++) {
      const base = (t * o.nHeads + h) * o.headDim;
      for (let i = 0; i < half; i++) {
        const c = table[((o.pos0 + t) * half + i) * 2]!;
        const s = table[((o.pos0 + t) * half + i) * 2 + 1]!;
        const [a, b] = o.neox ? [base + i, base + i + half] : [base + 2 * i, base + 2 * i + 1];
        out[a] = x[a]! * c - x[b]! * s;
        out[b] = x[a]! * s + x[b]! * c;
      }
    }
  }
  return out;
}

/** The angle of pair i at position p as the textbook defines RoPE (no scaling). */
export function ropeAngle(p: number, i: number, nRot: number, base: number): number {
  return p * Math.pow(base, (-2 * i) / nRot);
}

/** x rounded to half precision (round to nearest even), back as a number. */
export function roundF16(x: number): number {
  return f16ToF32(f32ToF16Bits(x));
}

/**
 * Causal GQA attention of nTokens queries (at positions pos0..) over keys/values 0..pos0+t, caches
 * given as [pos][kvHead][headDim]. With a window, a query at p sees only keys p − window + 1 ..= p
 * (llama.cpp's is_masked_swa, standard type); with a soft-cap c, scores s become c·tanh(s/c); with
 * sinks (gpt-oss), exp(sinks[h] − max) joins each head's softmax denominator (max over the sink too).
 */
export function attention(
  q: Float32Array,
  kCache: Float64Array,
  vCache: Float64Array,
  o: {
    pos0: number;
    nTokens: number;
    nHead: number;
    nKvHead: number;
    headDim: number;
    scale: number;
    window?: number;
    softcap?: number;
    sinks?: Float32Array;
    /** false: every query sees the whole batch (an encoder). */
    causal?: boolean;
  },
): Float64Array {
  const { nHead, nKvHead, headDim } = o;
  const out = new Float64Array(o.nTokens * nHead * headDim);
  for (let t = 0; t < o.nTokens; t++) {
    const pos = o.pos0 + t;
    const last = o.causal === false ? o.pos0 + o.nTokens - 1 : pos;
    const first = o.window ? Math.max(0, pos - o.window + 1) : 0;
    for (let h = 0; h < nHead; h++) {
      const kvh = Math.floor(h / (nHead / nKvHead));
      const scores = new Float64Array(last + 1 - first);
      for (let j = first; j <= last; j++) {
        let dot = 0;
        for (let d = 0; d < headDim; d++)
          dot += q[(t * nHead + h) * headDim + d]! * kCache[(j * nKvHead + kvh) * headDim + d]!;
        const s = dot * o.scale;
        scores[j - first] = o.softcap ? o.softcap * Math.tanh(s / o.softcap) : s;
      }
      const sink = o.sinks?.[h];
      const m = Math.max(...scores, sink ?? -Infinity);
      let sum = sink === undefined ? 0 : Math.exp(sink - m);
      for (let j = 0; j < scores.length; j++) sum += scores[j] = Math.exp(scores[j]! - m);
      for (let d = 0; d < headDim; d++) {
        let acc = 0;
        for (let j = first; j <= last; j++) acc += scores[j - first]! * vCache[(j * nKvHead + kvh) * headDim + d]!;
        out[(t * nHead + h) * headDim + d] = acc / sum;
      }
    }
  }
  return out;
}

export function silu(x: number): number {
  return x / (1 + Math.exp(-x));
}

/** gpt-oss's SwiGLU-OAI (ggml's swiglu_oai): g = min(gate, limit), g·sigmoid(alpha·g)·(clamp(up, ±limit) + 1). */
export function swigluOai(gate: number, up: number, alpha: number, limit: number): number {
  const g = Math.min(gate, limit);
  const u = Math.min(Math.max(up, -limit), limit);
  return (g / (1 + Math.exp(-alpha * g))) * (u + 1);
}

/**
 * GELU as llama.cpp's CPU computes it on f32 (GGML_GELU_FP16): 0 at or below −10, x at or above
 * 10, else its table entry: ggml_gelu_f32, the tanh approximation in float arithmetic, of x
 * rounded to half, rounded to half.
 */
export function geluHalfTable(x: number): number {
  if (x <= -10) return 0;
  if (x >= 10) return x;
  const f = Math.fround;
  const h = roundF16(x);
  const inner = f(f(f(0.7978845608028654) * h) * f(1 + f(f(f(0.044715) * h) * h)));
  return roundF16(f(f(0.5 * h) * f(1 + f(Math.tanh(inner)))));
}

/** llama.cpp's penalties sampler over a window of recent ids. */
export function penalize(
  logits: Float32Array,
  recent: readonly number[],
  o: { repeat: number; frequency: number; presence: number },
): Float64Array {
  const out = Float64Array.from(logits);
  const counts = new Map<number, number>();
  for (const t of recent) counts.set(t, (counts.get(t) ?? 0) + 1);
  for (const [t, c] of counts) {
    let z = out[t]!;
    z = z <= 0 ? z * o.repeat : z / o.repeat;
    out[t] = z - c * o.frequency - o.presence;
  }
  return out;
}

/**
 * The tokens llama.cpp's chain top-k -> top-p -> min-p keeps (sorted by logit), with their
 * probabilities after temperature, renormalized.
 */
export function keptDistribution(
  logits: ArrayLike<number>,
  o: { topK: number; topP: number; minP: number; temperature: number },
): Map<number, number> {
  let ids = Array.from({ length: logits.length }, (_, i) => i).sort((a, b) => logits[b]! - logits[a]! || a - b);
  if (o.topK > 0) ids = ids.slice(0, o.topK);
  const m = logits[ids[0]!]!;
  if (o.topP < 1) {
    const z = ids.reduce((s, i) => s + Math.exp(logits[i]! - m), 0);
    let cum = 0;
    let keep = ids.length;
    for (let r = 0; r < ids.length; r++) {
      cum += Math.exp(logits[ids[r]!]! - m) / z;
      if (cum >= o.topP) {
        keep = r + 1;
        break;
      }
    }
    ids = ids.slice(0, keep);
  }
  if (o.minP > 0) ids = ids.filter((i) => logits[i]! - m >= Math.log(o.minP));
  const w = ids.map((i) => Math.exp((logits[i]! - m) / o.temperature));
  const total = w.reduce((a, b) => a + b, 0);
  return new Map(ids.map((id, r) => [id, w[r]! / total]));
}

/**
 * MoE routing as llama.cpp's build_moe_ffn with softmax gating, in double precision: per token,
 * softmax over the experts, the `used` most probable (descending; equal probabilities to the
 * lower id), their probabilities divided by their sum (at least 2^-14) when `norm` is set.
 */
export function moeRoute(
  logits: Float32Array,
  experts: number,
  used: number,
  norm: boolean,
): { ids: number[]; weights: number[] } {
  const ids: number[] = [];
  const weights: number[] = [];
  for (let t = 0; t < logits.length / experts; t++) {
    const row = Array.from(logits.subarray(t * experts, (t + 1) * experts));
    const m = Math.max(...row);
    const e = row.map((z) => Math.exp(z - m));
    const z = e.reduce((a, b) => a + b, 0);
    const order = e
      .map((_, i) => i)
      .sort((a, b) => e[b]! - e[a]! || a - b)
      .slice(0, used);
    const w = order.map((i) => e[i]! / z);
    const sum = Math.max(
      w.reduce((a, b) => a + b, 0),
      6.103515625e-5,
    );
    ids.push(...order);
    weights.push(...(norm ? w.map((v) => v / sum) : w));
  }
  return { ids, weights };
}

/**
 * MoE routing as llama.cpp's build_moe_ffn with softmax_weight gating (gpt-oss), in double
 * precision: per token, the `used` largest logits (descending; equal ones to the lower id),
 * weighted by the softmax of those logits alone.
 */
export function moeRouteSoftmaxWeight(
  logits: Float32Array,
  experts: number,
  used: number,
): { ids: number[]; weights: number[] } {
  const ids: number[] = [];
  const weights: number[] = [];
  for (let t = 0; t < logits.length / experts; t++) {
    const row = Array.from(logits.subarray(t * experts, (t + 1) * experts));
    const order = row
      .map((_, i) => i)
      .sort((a, b) => row[b]! - row[a]! || a - b)
      .slice(0, used);
    const m = row[order[0]!]!;
    const e = order.map((i) => Math.exp(row[i]! - m));
    const z = e.reduce((a, b) => a + b, 0);
    ids.push(...order);
    weights.push(...e.map((v) => v / z));
  }
  return { ids, weights };
}
