/**
 * llama.cpp (node-llama-cpp, CPU, one thread) as the reference for the engine: greedy
 * continuations with the top-2 gap of each step, and teacher-forced next-token distributions.
 * Contexts use llama.cpp's defaults otherwise (F16 KV cache).
 */
import type { LlamaContext, LlamaContextSequence, LlamaModel } from 'node-llama-cpp';
import { kvCacheGgmlType } from '../../src-main/core/kv-cache-types';
import type { KvCacheTypes } from '../../src-preload/api/kv-cache';
import { llamaCpp } from '../support/llama';

async function withModel<T>(path: string, run: (model: LlamaModel) => Promise<T>): Promise<T> {
  const model = await (await llamaCpp()).loadModel({ modelPath: path });
  try {
    return await run(model);
  } finally {
    await model.dispose();
  }
}

/**
 * Natural-log probabilities of a node-llama-cpp probability map, as a dense array, renormalized in
 * double precision (llama.cpp's f32 probabilities sum to 1 only within rounding).
 */
function logProbs(probabilities: Map<number, number>, vocab: number): Float64Array {
  const out = new Float64Array(vocab).fill(-Infinity);
  let sum = 0;
  for (const p of probabilities.values()) sum += p;
  for (const [id, p] of probabilities) out[id] = Math.log(p / sum);
  return out;
}

export interface GreedyReference {
  ids: number[];
  /** Per generated token: log p(top-1) − log p(top-2) of the distribution it was picked from. */
  gaps: number[];
}

/**
 * A context's KV cache types (default: llama.cpp's f16, without flash attention); given, with flash
 * attention, which llama.cpp needs for a quantized V cache.
 */
export type ReferenceKv = KvCacheTypes | undefined;

/** llama.cpp's greedy continuation of `prompt` (token ids), `n` tokens, end of generation ignored. */
export function llamaGreedy(
  path: string,
  prompt: readonly number[],
  n: number,
  ctx = 256,
  kv?: ReferenceKv,
): Promise<GreedyReference> {
  return withModel(path, (model) => greedyOn(model, prompt, n, ctx, kv));
}

/**
 * After each token of `ids` from index `from` on: llama.cpp's next-token log-probabilities (raw
 * softmax, no sampling).
 */
export function llamaTeacherForced(
  path: string,
  ids: readonly number[],
  vocab: number,
  ctx = 256,
  o: { from?: number; kv?: ReferenceKv } = {},
): Promise<Float64Array[]> {
  return withModel(path, (model) => teacherForcedOn(model, ids, vocab, ctx, o));
}

/**
 * llamaTeacherForced over `ids`, then in the same context llamaGreedy's continuation of `ids`
 * (`n` tokens): the prompt is evaluated once, not twice. The first greedy token is the argmax of
 * the last forced distribution (which must be asked for: `from` < ids.length).
 */
export function llamaForcedThenGreedy(
  path: string,
  ids: readonly number[],
  vocab: number,
  ctx: number,
  o: { from: number; kv?: ReferenceKv },
  n: number,
): Promise<{ forced: Float64Array[]; greedy: GreedyReference }> {
  return withModel(path, (model) =>
    withContext(
      model,
      ctx,
      async (context) => {
        const sequence = context.getSequence();
        const forced = await forcedOn(sequence, ids, vocab, o.from);
        const [first, second] = [...forced.at(-1)!].map((v, id) => ({ v, id })).sort((x, y) => y.v - x.v);
        const greedy: GreedyReference = { ids: [first!.id], gaps: [first!.v - second!.v] };
        if (n > 1) await greedyFrom(sequence, [first!.id], n - 1, greedy);
        return { forced, greedy };
      },
      o.kv,
    ),
  );
}

/** llamaTeacherForced and llamaGreedy of one model, loaded once. */
export function llamaReferences(
  path: string,
  forced: { ids: readonly number[]; vocab: number },
  greedy: { prompt: readonly number[]; n: number },
): Promise<{ forced: Float64Array[]; greedy: GreedyReference }> {
  return withModel(path, async (model) => ({
    forced: await teacherForcedOn(model, forced.ids, forced.vocab, 256),
    greedy: await greedyOn(model, greedy.prompt, greedy.n, 256),
  }));
}

/** Each run gets a context of its own, freed before the next. */
async function withContext<T>(
  model: LlamaModel,
  ctx: number,
  run: (context: LlamaContext) => Promise<T>,
  kv?: ReferenceKv,
): Promise<T> {
  const cache = kv && {
    flashAttention: true,
    experimentalKvCacheKeyType: kvCacheGgmlType(kv.k).name as 'F16',
    experimentalKvCacheValueType: kvCacheGgmlType(kv.v).name as 'F16',
  };
  const context = await model.createContext({ contextSize: ctx, threads: 1, ...cache });
  try {
    return await run(context);
  } finally {
    await context.dispose();
  }
}

function greedyOn(
  model: LlamaModel,
  prompt: readonly number[],
  n: number,
  ctx: number,
  kv?: ReferenceKv,
): Promise<GreedyReference> {
  return withContext(
    model,
    ctx,
    async (context) => {
      const out: GreedyReference = { ids: [], gaps: [] };
      await greedyFrom(context.getSequence(), prompt, n, out);
      return out;
    },
    kv,
  );
}

/** Appends to `out` the greedy continuation of what `sequence` holds followed by `tokens`, `n` tokens. */
async function greedyFrom(
  sequence: LlamaContextSequence,
  tokens: readonly number[],
  n: number,
  out: GreedyReference,
): Promise<void> {
  let generated = 0;
  for await (const step of sequence.evaluateWithMetadata(
    [...tokens] as never[],
    { probabilities: true },
    { temperature: 0 },
  )) {
    out.ids.push(step.token);
    const [first, second] = [...step.probabilities.values()];
    out.gaps.push(Math.log(first!) - Math.log(second ?? 0));
    if (++generated >= n) break;
  }
}

function teacherForcedOn(
  model: LlamaModel,
  ids: readonly number[],
  vocab: number,
  ctx: number,
  o: { from?: number; kv?: ReferenceKv } = {},
): Promise<Float64Array[]> {
  const from = o.from ?? 0;
  return withContext(model, ctx, (context) => forcedOn(context.getSequence(), ids, vocab, from), o.kv);
}

async function forcedOn(
  sequence: LlamaContextSequence,
  ids: readonly number[],
  vocab: number,
  from: number,
): Promise<Float64Array[]> {
  const outputs = await sequence.controlledEvaluate(
    ids.map((t, i) => (i < from ? t : [t, { generateNext: { probabilities: true } }]) as never),
  );
  return outputs.slice(from).map((out, i) => {
    if (!out?.next.probabilities) throw new Error(`llama.cpp gave no probabilities at position ${from + i}`);
    return logProbs(out.next.probabilities, vocab);
  });
}

/** log-softmax of f32 logits, in double precision. */
export function logSoftmax(logits: Float32Array): Float64Array {
  let m = -Infinity;
  for (const z of logits) m = Math.max(m, z);
  let s = 0;
  for (const z of logits) s += Math.exp(z - m);
  const logZ = m + Math.log(s);
  return Float64Array.from(logits, (z) => z - logZ);
}

export interface Agreement {
  positions: number;
  /** Fraction of positions where both pick the same most likely token. */
  top1: number;
  /** Mean KL(ref ‖ ours) in nats. */
  meanKl: number;
  maxKl: number;
}

export function compareDistributions(ref: readonly Float64Array[], ours: readonly Float64Array[]): Agreement {
  let same = 0;
  let klSum = 0;
  let klMax = 0;
  const argmax = (a: Float64Array) => a.reduce((best, v, i) => (v > a[best]! ? i : best), 0);
  for (let i = 0; i < ref.length; i++) {
    const p = ref[i]!;
    const q = ours[i]!;
    if (argmax(p) === argmax(q)) same++;
    let kl = 0;
    for (let t = 0; t < p.length; t++) if (p[t]! > -Infinity) kl += Math.exp(p[t]!) * (p[t]! - q[t]!);
    klSum += kl;
    klMax = Math.max(klMax, kl);
  }
  return { positions: ref.length, top1: same / ref.length, meanKl: klSum / ref.length, maxKl: klMax };
}
