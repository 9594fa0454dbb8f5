/**
 * The mixture-of-experts FFN of a layer (llama.cpp's build_moe_ffn: softmax gating, plus
 * qwen2moe's gated shared expert; gpt-oss's softmax_weight gating, biases and SwiGLU-OAI), on the
 * GPU from the router to the residual add:
 *
 *   logits = router · xb (+ b_router)           [token][experts]     matmul (add_bias)
 *   ids, weights = top-k(softmax(logits))       [token][used]        moe_route
 *     (gpt-oss: top-k(logits), softmax of those)
 *   table = the (token, expert) pairs by expert                      moe_group
 *   gate, up = W_gate[e] · xb, W_up[e] · xb     [pair][nFfExp]       expert matmuls
 *     (gpt-oss: + b_gate[e], b_up[e])                                moe_add_bias
 *   gate = silu(gate) · up (gpt-oss: SwiGLU-OAI)                     swiglu (swiglu_oai)
 *   down = W_down[e] · gate (+ b_down[e])       [pair][nEmbd]        expert matmul (moe_add_bias)
 *   x += Σ weights · down  (+ sigmoid(gate_inp_shexp · xb) · shared_ffn(xb))   moe_combine
 *
 * In collection mode (importance matrices) each matrix's input is summed too: the stacked experts'
 * per expert, over the rows the routing sent to each (ExpertRoute).
 *
 * The chosen experts never come back to the CPU: the expert matmuls take them from the routing
 * table, tile by tile (the tokens of a prefill batch that chose the same expert share its
 * decoded blocks), and decode only the chosen experts' blocks.
 */
import type { GgufFile } from '../../core/gguf/gguf-file';
import { tensorLocation, tensorName, type BlockRole } from '../../core/tensor-names';
import { EXPERT_TILE, routingTable, type MatmulKernels, type TokenDispatch } from '../gpu/matmul';
import type { Dispatch, OpKernels, Step } from '../gpu/ops';
import type { GpuWeight } from '../gpu/weights';
import { UnsupportedModelError, type HParams, type MoeParams } from './hparams';

/** One layer's MoE weights; with a merged ffn_gate_up_exps, gate and up are that one tensor. */
export interface MoeLayerWeights {
  router: GpuWeight;
  gate: GpuWeight;
  up: GpuWeight;
  down: GpuWeight;
  shared?: { gateInp: GpuWeight; gate: GpuWeight; up: GpuWeight; down: GpuWeight };
  /** gpt-oss: the router's bias [experts] and the experts' [expert][rows] biases, f32. */
  biases?: { router: GPUBuffer; gate: GPUBuffer; up: GPUBuffer; down: GPUBuffer };
}

/** Scratch buffers every layer's MoE FFN shares, sized for maxBatch tokens (`B`: a GPUBuffer, or memory-plan.ts's size). */
export interface MoeScratch<B = GPUBuffer> {
  logits: B;
  ids: B;
  weights: B;
  table: B;
  gate: B;
  up: B;
  down: B;
  /** qwen2moe's shared expert: its output and its gate logit per token. */
  sharedOut?: B;
  sharedGate?: B;
}

/** Which expert each input row of a stacked expert matmul went to: the routing's ids, [token][used]. */
export interface ExpertRoute {
  ids: GPUBuffer;
  experts: number;
  used: number;
  /** One input row per (token, expert) pair (the down projection); otherwise one per token. */
  perPair: boolean;
}

/** What the FFN is built from: the model's kernels, and where each buffer of its layers is. */
export interface MoeBuild {
  hp: HParams;
  moe: MoeParams;
  ops: OpKernels;
  matmul: MatmulKernels;
  step: Step;
  maxBatch: number;
  /** Registers a dispatch whose token count follows the batch. */
  track(d: TokenDispatch): TokenDispatch;
  /** The residual stream and the normed FFN input, [token][nEmbd]. */
  x: GPUBuffer;
  xb: GPUBuffer;
  /** The dense FFN's activations, [token][nFfShexp] at least (the shared expert uses them). */
  denseGate: GPUBuffer;
  denseUp: GPUBuffer;
  scratch: MoeScratch;
  /** A step that, in collection mode, adds the squares of `x` (the input of `weights`) to their sums; per expert with `route`. */
  collect(weights: string[], x: GPUBuffer, width: number, route?: ExpertRoute): Dispatch;
}

const blk = (l: number, role: BlockRole) => tensorName(role, l);
const BIASED = ['ffn_gate_inp', 'ffn_gate_exps', 'ffn_up_exps', 'ffn_down_exps'] as const;
const biasName = (l: number, role: (typeof BIASED)[number]) => tensorName(role, l, 'bias');

/** gpt-oss's SwiGLU-OAI constants (llama.cpp's LLM_FFN_SWIGLU_OAI_MOE). */
const SWIGLU_OAI = { alpha: 1.702, limit: 7 };

/** The matrices of layer l's MoE FFN (the shared expert's 1-row gate included). */
export function moeTensorNames(moe: MoeParams, l: number): string[] {
  const names = [blk(l, 'ffn_gate_inp')];
  names.push(
    ...(moe.mergedGateUp ? [blk(l, 'ffn_gate_up_exps')] : [blk(l, 'ffn_gate_exps'), blk(l, 'ffn_up_exps')]),
    blk(l, 'ffn_down_exps'),
  );
  if (moe.nFfShexp > 0)
    names.push(
      ...(['ffn_gate_inp_shexp', 'ffn_gate_shexp', 'ffn_up_shexp', 'ffn_down_shexp'] as const).map((n) => blk(l, n)),
    );
  return names;
}

/** The f32 bias vectors of layer l's MoE FFN (gpt-oss; none otherwise). */
export function moeBiasNames(moe: MoeParams, l: number): string[] {
  return moe.biases ? BIASED.map((name) => biasName(l, name)) : [];
}

/** Checks every MoE tensor's shape against the metadata before anything is uploaded. */
export function checkMoeShapes(gguf: GgufFile, hp: HParams, moe: MoeParams): void {
  const { nEmbd } = hp;
  const { nExpert, nFfExp, nFfShexp } = moe;
  const expected: Record<string, number[]> = {
    ffn_gate_inp: [nEmbd, nExpert],
    ffn_gate_exps: [nEmbd, nFfExp, nExpert],
    ffn_up_exps: [nEmbd, nFfExp, nExpert],
    ffn_gate_up_exps: [nEmbd, 2 * nFfExp, nExpert],
    ffn_down_exps: [nFfExp, nEmbd, nExpert],
    ffn_gate_inp_shexp: [nEmbd],
    ffn_gate_shexp: [nEmbd, nFfShexp],
    ffn_up_shexp: [nEmbd, nFfShexp],
    ffn_down_shexp: [nFfShexp, nEmbd],
  };
  const expectedBias: Record<string, number[]> = {
    ffn_gate_inp: [nExpert],
    ffn_gate_exps: [nFfExp, nExpert],
    ffn_up_exps: [nFfExp, nExpert],
    ffn_down_exps: [nEmbd, nExpert],
  };
  for (let l = 0; l < hp.nLayer; l++) {
    for (const name of [...moeTensorNames(moe, l), ...moeBiasNames(moe, l)]) {
      const tensor = gguf.tensor(name);
      if (!tensor) throw new UnsupportedModelError(`${gguf.file}: tensor ${name} is missing`);
      const [role, kind] = tensorLocation(name).role.split('.');
      const want = (kind === 'bias' ? expectedBias : expected)[role!]!;
      if (tensor.ne.join() !== want.join()) {
        throw new UnsupportedModelError(
          `${gguf.file}: tensor ${name} has shape [${tensor.ne.join(', ')}], expected [${want.join(', ')}]`,
        );
      }
    }
  }
}

/** Layer l's MoE weights from the uploaded ones (`weight` and `vector` look a tensor up by name). */
export function moeLayerWeights(
  moe: MoeParams,
  l: number,
  weight: (name: string) => GpuWeight,
  vector: (name: string) => GPUBuffer,
): MoeLayerWeights {
  const w = (role: BlockRole) => weight(blk(l, role));
  const b = (name: (typeof BIASED)[number]) => vector(biasName(l, name));
  const merged = moe.mergedGateUp ? w('ffn_gate_up_exps') : undefined;
  return {
    router: w('ffn_gate_inp'),
    gate: merged ?? w('ffn_gate_exps'),
    up: merged ?? w('ffn_up_exps'),
    down: w('ffn_down_exps'),
    shared:
      moe.nFfShexp > 0
        ? {
            gateInp: w('ffn_gate_inp_shexp'),
            gate: w('ffn_gate_shexp'),
            up: w('ffn_up_shexp'),
            down: w('ffn_down_shexp'),
          }
        : undefined,
    biases: moe.biases
      ? { router: b('ffn_gate_inp'), gate: b('ffn_gate_exps'), up: b('ffn_up_exps'), down: b('ffn_down_exps') }
      : undefined,
  };
}

/** The scratch buffers for maxBatch tokens, made by `buffer`. */
export function moeScratch<B>(
  hp: HParams,
  moe: MoeParams,
  maxBatch: number,
  buffer: (label: string, bytes: number) => B,
): MoeScratch<B> {
  const pairs = maxBatch * moe.nExpertUsed;
  const shared = moe.nFfShexp > 0;
  return {
    logits: buffer('moe logits', maxBatch * moe.nExpert * 4),
    ids: buffer('moe ids', pairs * 4),
    weights: buffer('moe weights', pairs * 4),
    table: buffer('moe routing table', routingTable(maxBatch, moe.nExpertUsed, moe.nExpert).words * 4),
    gate: buffer('moe gate', pairs * moe.nFfExp * 4),
    up: buffer('moe up', pairs * moe.nFfExp * 4),
    down: buffer('moe down', pairs * hp.nEmbd * 4),
    sharedOut: shared ? buffer('shared expert out', maxBatch * hp.nEmbd * 4) : undefined,
    sharedGate: shared ? buffer('shared expert gate', maxBatch * 4) : undefined,
  };
}

/** The dispatches of one layer's MoE FFN, from xb (the normed input) to x += its output. */
export function moeFfn(b: MoeBuild, w: MoeLayerWeights): Dispatch[] {
  const { moe, ops, matmul, step, scratch: s } = b;
  const used = moe.nExpertUsed;
  // Dispatches start at one token; setBatch() sets every tracked one's count.
  const n = 1;
  const halves = moe.mergedGateUp
    ? { gate: { first: 0, count: moe.nFfExp }, up: { first: moe.nFfExp, count: moe.nFfExp } }
    : {};
  const bias = w.biases;
  // gpt-oss: each pair's rows get its expert's bias.
  const expertBias = (rows: GPUBuffer, buffer: GPUBuffer | undefined, width: number) =>
    buffer ? [ops.moeAddBias({ rows, bias: buffer, ids: s.ids, step, width, used })] : [];
  const sh = w.shared;
  const route = (perPair: boolean): ExpertRoute => ({ ids: s.ids, experts: moe.nExpert, used, perPair });
  const out: Dispatch[] = [
    b.collect(
      [w.router, ...(sh ? [sh.gateInp, sh.gate, sh.up] : [])].map((m) => m.name),
      b.xb,
      b.hp.nEmbd,
    ),
    b.track(matmul.matmul(w.router, b.xb, s.logits, n)),
    ...(bias ? [ops.addBias(s.logits, bias.router, moe.nExpert, step)] : []),
    ops.moeRoute({
      logits: s.logits,
      ids: s.ids,
      weights: s.weights,
      step,
      experts: moe.nExpert,
      used,
      norm: moe.normWeights,
      gating: moe.gating,
    }),
    b.collect([...new Set([w.gate.name, w.up.name])], b.xb, b.hp.nEmbd, route(false)),
    ops.moeGroup({
      ids: s.ids,
      table: s.table,
      step,
      experts: moe.nExpert,
      used,
      tile: EXPERT_TILE,
      pairsAt: routingTable(b.maxBatch, used, moe.nExpert).pairsAt,
    }),
    b.track(matmul.matmulExperts(w.gate, b.xb, s.gate, s.table, n, { used, xGroup: used, rows: halves.gate })),
    ...expertBias(s.gate, bias?.gate, moe.nFfExp),
    b.track(matmul.matmulExperts(w.up, b.xb, s.up, s.table, n, { used, xGroup: used, rows: halves.up })),
    ...expertBias(s.up, bias?.up, moe.nFfExp),
    moe.act === 'swiglu_oai'
      ? ops.swigluOai(s.gate, s.up, used * moe.nFfExp, step, SWIGLU_OAI.alpha, SWIGLU_OAI.limit)
      : ops.swiglu(s.gate, s.up, used * moe.nFfExp, step),
    b.collect([w.down.name], s.gate, moe.nFfExp, route(true)),
    b.track(matmul.matmulExperts(w.down, s.gate, s.down, s.table, n, { used, xGroup: 1 })),
    ...expertBias(s.down, bias?.down, b.hp.nEmbd),
  ];
  if (!sh || !s.sharedOut || !s.sharedGate) {
    out.push(ops.moeCombine({ x: b.x, down: s.down, weights: s.weights, step, width: b.hp.nEmbd, used }));
    return out;
  }
  out.push(
    b.track(matmul.matmul(sh.gateInp, b.xb, s.sharedGate, n)),
    b.track(matmul.matmul(sh.gate, b.xb, b.denseGate, n)),
    b.track(matmul.matmul(sh.up, b.xb, b.denseUp, n)),
    ops.swiglu(b.denseGate, b.denseUp, moe.nFfShexp, step),
    b.collect([sh.down.name], b.denseGate, moe.nFfShexp),
    b.track(matmul.matmul(sh.down, b.denseGate, s.sharedOut, n)),
    ops.moeCombine({
      x: b.x,
      down: s.down,
      weights: s.weights,
      step,
      width: b.hp.nEmbd,
      used,
      shared: { out: s.sharedOut, gate: s.sharedGate },
    }),
  );
  return out;
}
