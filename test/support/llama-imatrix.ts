/**
 * llama.cpp's importance-matrix collector (`llama-imatrix`, tools/imatrix/imatrix.cpp of
 * node-llama-cpp's llama.cpp), rebuilt on node-llama-cpp's prebuilt libllama through koffi: a
 * CPU context whose graph evaluation callback (cb_eval) sees every matmul, and in it what
 * IMatrixCollector::collect_imatrix does. The oracle for `gufo imatrix`. Tests only.
 *
 *   const { chunks, weights } = llamaImatrix(modelPath, text, { ctx: 64 });
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import koffi from 'koffi';
import type { CollectedWeight } from '../../src-main/core/imatrix';
import { ggml, ggmlBasePath } from './ggml-oracle';
import { libllamaPath } from './llama-quantize';

const GGML_TYPE_F32 = 0;
const GGML_TYPE_F16 = 1;

/**
 * struct llama_model_params of llama.h (node-llama-cpp's llama.cpp, v0.4.0). Checked against
 * llama_model_default_params() in `modelParams`.
 */
const ModelParams = koffi.struct('gufo_imatrix_llama_model_params', {
  devices: 'void *',
  tensor_buft_overrides: 'void *',
  n_gpu_layers: 'int32_t',
  split_mode: 'int',
  load_mode: 'int',
  lazy_mode: 'int',
  main_gpu: 'int32_t',
  tensor_split: 'void *',
  progress_callback: 'void *',
  progress_callback_user_data: 'void *',
  kv_overrides: 'void *',
  vocab_only: 'bool',
  check_tensors: 'bool',
  use_extra_bufts: 'bool',
  no_host: 'bool',
  no_alloc: 'bool',
  load_mtp: 'bool',
});

/** struct llama_context_params of the same llama.h, checked against llama_context_default_params() in `contextParams`. */
const ContextParams = koffi.struct('gufo_imatrix_llama_context_params', {
  n_ctx: 'uint32_t',
  n_batch: 'uint32_t',
  n_ubatch: 'uint32_t',
  n_seq_max: 'uint32_t',
  n_rs_seq: 'uint32_t',
  n_outputs_max: 'uint32_t',
  n_outputs_max_per_seq: 'uint32_t',
  n_threads: 'int32_t',
  n_threads_batch: 'int32_t',
  ctx_type: 'int',
  rope_scaling_type: 'int',
  pooling_type: 'int',
  attention_type: 'int',
  flash_attn_type: 'int',
  rope_freq_base: 'float',
  rope_freq_scale: 'float',
  yarn_ext_factor: 'float',
  yarn_attn_factor: 'float',
  yarn_beta_fast: 'float',
  yarn_beta_slow: 'float',
  yarn_orig_ctx: 'uint32_t',
  defrag_thold: 'float',
  cb_eval: 'void *',
  cb_eval_user_data: 'void *',
  type_k: 'int',
  type_v: 'int',
  abort_callback: 'void *',
  abort_callback_data: 'void *',
  embeddings: 'bool',
  offload_kqv: 'bool',
  no_perf: 'bool',
  op_offload: 'bool',
  swa_full: 'bool',
  kv_unified: 'bool',
  samplers: 'void *',
  n_samplers: 'size_t',
  ctx_other: 'void *',
});

/** struct llama_batch: the token, position, sequence and output arrays llama_batch_init allocates (named in the signatures below). */
koffi.struct('gufo_imatrix_llama_batch', {
  n_tokens: 'int32_t',
  token: 'int32_t *',
  embd: 'float *',
  pos: 'int32_t *',
  n_seq_id: 'int32_t *',
  seq_id: 'void *',
  logits: 'int8_t *',
});

/**
 * struct ggml_tensor of ggml.h (GGML_MAX_DIMS 4, GGML_MAX_OP_PARAMS 64, GGML_MAX_SRC 10,
 * GGML_MAX_NAME 64). Checked against ggml_tensor_overhead() once and against ggml's own getters
 * (ggml_nelements, ggml_nbytes, ggml_get_name, ggml_op_desc) for every tensor read.
 */
const Tensor = koffi.struct('gufo_imatrix_ggml_tensor', {
  type: 'int',
  buffer: 'void *',
  ne: koffi.array('int64_t', 4),
  nb: koffi.array('size_t', 4),
  op: 'int',
  op_params: koffi.array('int32_t', 16),
  flags: 'int32_t',
  src: koffi.array('void *', 10),
  view_src: 'void *',
  view_offs: 'size_t',
  data: 'void *',
  name: koffi.array('char', 64),
  extra: 'void *',
  padding: koffi.array('char', 8),
});

interface TensorView {
  ptr: unknown;
  type: number;
  ne: number[];
  nb: number[];
  op: string;
  name: string;
  src: unknown[];
}

/** More bytes than either params struct needs: a return buffer too large is harmless, one too small is not. */
const RAW_BYTES = 512;
const RawParams = koffi.struct('gufo_imatrix_llama_params_raw', { raw: koffi.array('uint8_t', RAW_BYTES) });
const EvalCallback = koffi.proto('bool gufo_ggml_sched_eval_callback(void *t, bool ask, void *user_data)');
const LogCallback = koffi.proto('void gufo_imatrix_log_callback(int level, const char *text, void *user_data)');

interface Lib {
  modelDefaults: () => { raw: Uint8Array };
  contextDefaults: () => { raw: Uint8Array };
  loadModel: (path: string, params: Record<string, unknown>) => unknown;
  freeModel: (model: unknown) => void;
  initContext: (model: unknown, params: Record<string, unknown>) => unknown;
  freeContext: (ctx: unknown) => void;
  memory: (ctx: unknown) => unknown;
  clearMemory: (memory: unknown, data: boolean) => void;
  batchInit: (tokens: number, embd: number, seqMax: number) => Record<string, unknown>;
  batchFree: (batch: Record<string, unknown>) => void;
  decode: (ctx: unknown, batch: Record<string, unknown>) => number;
  vocab: (model: unknown) => unknown;
  tokenize: (
    vocab: unknown,
    text: string,
    textBytes: number,
    out: Int32Array,
    max: number,
    addSpecial: boolean,
    parseSpecial: boolean,
  ) => number;
  addBos: (vocab: unknown) => boolean;
  bos: (vocab: unknown) => number;
}

let lib: Lib | undefined;
const log: string[] = [];

function load(): Lib {
  if (lib) return lib;
  const so = koffi.load(libllamaPath());
  // Collect llama.cpp's log instead of letting it flood stderr; errors quote it.
  const callback = koffi.register((_level: number, text: string) => void log.push(text), koffi.pointer(LogCallback));
  so.func('void llama_log_set(gufo_imatrix_log_callback *cb, void *user_data)')(callback, null);
  // libggml loads the CPU backend (the variant for this CPU) from the files beside it.
  const dir = dirname(ggmlBasePath());
  const ggmlFile = readdirSync(dir).find((f) => /^(lib)?ggml(\.v[\d.]+)?\.(so|dylib|dll)$/.test(f));
  if (!ggmlFile) throw new Error(`no libggml in ${dir}`);
  koffi.load(join(dir, ggmlFile)).func('void ggml_backend_load_all_from_path(const char *dir)')(dir);
  so.func('void llama_backend_init(void)')();
  lib = {
    modelDefaults: so.func('llama_model_default_params', RawParams, []) as Lib['modelDefaults'],
    contextDefaults: so.func('llama_context_default_params', RawParams, []) as Lib['contextDefaults'],
    loadModel: so.func(
      'void *llama_model_load_from_file(const char *path, gufo_imatrix_llama_model_params params)',
    ) as Lib['loadModel'],
    freeModel: so.func('void llama_model_free(void *model)') as Lib['freeModel'],
    initContext: so.func(
      'void *llama_init_from_model(void *model, gufo_imatrix_llama_context_params params)',
    ) as Lib['initContext'],
    freeContext: so.func('void llama_free(void *ctx)') as Lib['freeContext'],
    memory: so.func('void *llama_get_memory(void *ctx)') as Lib['memory'],
    clearMemory: so.func('void llama_memory_clear(void *mem, bool data)') as Lib['clearMemory'],
    batchInit: so.func(
      'gufo_imatrix_llama_batch llama_batch_init(int32_t n_tokens, int32_t embd, int32_t n_seq_max)',
    ) as Lib['batchInit'],
    batchFree: so.func('void llama_batch_free(gufo_imatrix_llama_batch batch)') as Lib['batchFree'],
    decode: so.func('int32_t llama_decode(void *ctx, gufo_imatrix_llama_batch batch)') as Lib['decode'],
    vocab: so.func('void *llama_model_get_vocab(void *model)') as Lib['vocab'],
    tokenize: so.func(
      'int32_t llama_tokenize(void *vocab, const char *text, int32_t text_len, _Out_ int32_t *tokens, int32_t n_tokens_max, bool add_special, bool parse_special)',
    ) as Lib['tokenize'],
    addBos: so.func('bool llama_vocab_get_add_bos(void *vocab)') as Lib['addBos'],
    bos: so.func('int32_t llama_vocab_bos(void *vocab)') as Lib['bos'],
  };
  return lib;
}

/** Throws unless every field named holds the value expected: the bytes were not laid out as our struct. */
function expectFields(struct: string, values: Record<string, unknown>, expected: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(expected)) {
    const got = typeof values[k] === 'bigint' ? Number(values[k]) : values[k];
    const want = v === null ? [null, 0] : [v];
    if (!want.includes(got as never))
      throw new Error(`${struct} layout mismatch: ${k} = ${String(got)}, expected ${String(v)}`);
  }
}

/** llama_model_default_params(), decoded with our layout and checked field by field. */
function modelParams(): Record<string, unknown> {
  const params = koffi.decode(load().modelDefaults().raw, ModelParams) as Record<string, unknown>;
  expectFields('llama_model_params', params, {
    devices: null,
    tensor_buft_overrides: null,
    n_gpu_layers: -1,
    split_mode: 1,
    load_mode: -1,
    lazy_mode: 1,
    main_gpu: 0,
    tensor_split: null,
    progress_callback: null,
    progress_callback_user_data: null,
    kv_overrides: null,
    vocab_only: false,
    check_tensors: false,
    use_extra_bufts: true,
    no_host: false,
    no_alloc: false,
    load_mtp: false,
  });
  return params;
}

/** llama_context_default_params(), decoded with our layout and checked field by field. */
function contextParams(): Record<string, unknown> {
  const params = koffi.decode(load().contextDefaults().raw, ContextParams) as Record<string, unknown>;
  expectFields('llama_context_params', params, {
    n_ctx: 512,
    n_batch: 2048,
    n_ubatch: 512,
    n_seq_max: 1,
    n_rs_seq: 0,
    n_outputs_max: 0,
    n_outputs_max_per_seq: 1,
    n_threads: 4,
    n_threads_batch: 4,
    ctx_type: 0,
    rope_scaling_type: -1,
    pooling_type: -1,
    attention_type: -1,
    flash_attn_type: -1,
    rope_freq_base: 0,
    rope_freq_scale: 0,
    yarn_ext_factor: -1,
    yarn_attn_factor: -1,
    yarn_beta_fast: -1,
    yarn_beta_slow: -1,
    yarn_orig_ctx: 0,
    defrag_thold: -1,
    cb_eval: null,
    cb_eval_user_data: null,
    type_k: GGML_TYPE_F16,
    type_v: GGML_TYPE_F16,
    abort_callback: null,
    abort_callback_data: null,
    embeddings: false,
    offload_kqv: true,
    no_perf: true,
    op_offload: true,
    swa_full: true,
    kv_unified: false,
    samplers: null,
    n_samplers: 0,
    ctx_other: null,
  });
  return params;
}

const getters = {
  nelements: () => ggml.fn('int64_t ggml_nelements(void *t)'),
  nbytes: () => ggml.fn('size_t ggml_nbytes(void *t)'),
  nrows: () => ggml.fn('int64_t ggml_nrows(void *t)'),
  name: () => ggml.fn('const char *ggml_get_name(void *t)'),
  opDesc: () => ggml.fn('const char *ggml_op_desc(void *t)'),
  opName: () => ggml.fn('const char *ggml_op_name(int op)'),
  get: () => ggml.fn('void ggml_backend_tensor_get(void *t, _Out_ uint8_t *data, size_t offset, size_t size)'),
};

let tensorSizeChecked = false;

/** The ggml_tensor at `ptr`, read with our layout and checked against ggml's getters. */
function tensorAt(ptr: unknown): TensorView {
  if (!tensorSizeChecked) {
    // ggml_tensor_overhead() = sizeof(struct ggml_object) (32) + sizeof(struct ggml_tensor).
    const overhead = Number(ggml.fn('size_t ggml_tensor_overhead(void)')());
    if (overhead !== 32 + koffi.sizeof(Tensor))
      throw new Error(
        `ggml_tensor layout mismatch: ggml_tensor_overhead() = ${overhead}, ours ${32 + koffi.sizeof(Tensor)}`,
      );
    tensorSizeChecked = true;
  }
  const t = koffi.decode(ptr, Tensor) as {
    type: number;
    ne: (number | bigint)[];
    nb: (number | bigint)[];
    op: number;
    name: string;
    src: unknown[];
  };
  const view: TensorView = {
    ptr,
    type: t.type,
    ne: Array.from(t.ne, Number),
    nb: Array.from(t.nb, Number),
    op: getters.opName()(t.op) as string,
    name: t.name,
    src: t.src,
  };
  const nelements = Number(getters.nelements()(ptr));
  const name = getters.name()(ptr) as string;
  // ggml_op_desc names the unary or GLU function instead of the op for those two.
  const opMatches = view.op === 'UNARY' || view.op === 'GLU' || getters.opDesc()(ptr) === view.op;
  if (nelements !== view.ne.reduce((a, b) => a * b, 1) || name !== view.name || !opMatches) {
    throw new Error(
      `ggml_tensor layout mismatch at "${name}": ne [${view.ne.join(', ')}] for ${nelements} elements, name "${view.name}", op ${view.op}`,
    );
  }
  return view;
}

/** A tensor's bytes (ggml_nbytes of them, from its first element: strides hold for views too). */
function bytesOf(t: TensorView): ArrayBuffer {
  const bytes = Number(getters.nbytes()(t.ptr));
  const out = new Uint8Array(bytes);
  getters.get()(t.ptr, out, 0, bytes);
  return out.buffer;
}

/** llama-imatrix's filter_tensor_name: "CUDA0#blk.0.attn_k.weight#0" → "blk.0.attn_k.weight". */
function weightName(name: string): string {
  const p = name.indexOf('#');
  if (p < 0) return name;
  const q = name.indexOf('#', p + 1);
  return q < 0 ? name.slice(p + 1) : name.slice(p + 1, q);
}

/** A weight's running sums, in f32 as llama-imatrix keeps them (plus Σ x, which newer llama-imatrix files hold as in_sum). */
interface Accumulator {
  sums: Float32Array;
  inSums: Float32Array;
  counts: number[];
}

function accumulatorOf(
  stats: Map<string, Accumulator>,
  weight: string,
  columns: number,
  matrices: number,
): Accumulator {
  let a = stats.get(weight);
  if (!a)
    stats.set(
      weight,
      (a = {
        sums: new Float32Array(columns * matrices),
        inSums: new Float32Array(columns * matrices),
        counts: new Array<number>(matrices).fill(0),
      }),
    );
  if (a.sums.length !== columns * matrices)
    throw new Error(`${weight}: inconsistent size (${a.sums.length} vs ${columns * matrices})`);
  return a;
}

function addRow(a: Accumulator, at: number, x: Float32Array, from: number, n: number): void {
  for (let j = 0; j < n; j++) {
    const v = x[from + j]!;
    a.sums[at + j]! += Math.fround(v * v);
    a.inSums[at + j]! += v;
  }
}

/** IMatrixCollector::collect_imatrix with ask = false: the matmul `t` has run; add its input rows. */
function collect(stats: Map<string, Accumulator>, t: TensorView): void {
  const src0 = tensorAt(t.src[0]);
  const src1 = tensorAt(t.src[1]);
  const weight = weightName(src0.name);
  if (src1.type !== GGML_TYPE_F32 || src1.nb[0] !== 4)
    throw new Error(`${weight}: input ${src1.name} is not contiguous f32 rows`);
  const x = new Float32Array(bytesOf(src1));
  const [ne0, ne1, ne2, ne3] = src1.ne as [number, number, number, number];
  const nb = src1.nb.map((b) => b / 4);
  if (t.op === 'MUL_MAT_ID') {
    // ids [n_expert_used, n_tokens]; src1 [columns, n_expert_used or 1, n_tokens].
    const idsView = tensorAt(t.src[2]);
    const ids = new Int32Array(bytesOf(idsView));
    const experts = src0.ne[2]!;
    const a = accumulatorOf(stats, weight, ne0, experts);
    for (let slot = 0; slot < idsView.ne[0]!; slot++) {
      for (let row = 0; row < ne2; row++) {
        const e = ids[(row * idsView.nb[1]! + slot * idsView.nb[0]!) / 4]!;
        if (e < 0 || e >= experts) throw new Error(`${weight}: expert id ${e} out of range`);
        addRow(a, e * ne0, x, (slot % ne1) * nb[1]! + row * nb[2]!, ne0);
        a.counts[e]!++;
      }
    }
    return;
  }
  const matrices = src0.ne[2]! * src0.ne[3]!;
  const a = accumulatorOf(stats, weight, ne0, matrices);
  for (let i3 = 0; i3 < ne3; i3++) {
    for (let i2 = 0; i2 < ne2; i2++) {
      const m = (i3 % src0.ne[3]!) * src0.ne[2]! + (i2 % src0.ne[2]!);
      for (let row = 0; row < ne1; row++) addRow(a, m * ne0, x, row * nb[1]! + i2 * nb[2]! + i3 * nb[3]!, ne0);
    }
  }
  a.counts[0]! += Number(getters.nrows()(src1.ptr)) / matrices;
}

export interface LlamaImatrixOptions {
  /** --ctx-size: the chunk size in tokens. */
  ctx: number;
  /** --chunks: evaluate at most this many (default: all whole chunks). */
  chunks?: number;
  /** KV cache type: F16 (llama-imatrix's default) or F32. */
  kvF32?: boolean;
  /** --flash-attn: on, off, or llama.cpp's default (auto). */
  flashAttention?: 'on' | 'off' | 'auto';
  /** CPU threads (default 2: these machines are small and shared). */
  threads?: number;
}

export interface LlamaImatrixResult {
  /** The token ids evaluated, chunk by chunk (BOS in place). */
  chunks: number[][];
  /** Per weight, sorted by name. */
  weights: CollectedWeight[];
}

/**
 * llama-imatrix over `text` (its compute_imatrix): tokenized by llama.cpp with BOS where the
 * vocabulary adds one, refused under two chunks, cut into whole chunks of `ctx` tokens whose first
 * token becomes BOS; each chunk decoded from an empty KV cache in one batch with every position an
 * output (as `-b` equal to `--ctx-size`; llama-imatrix's default packs several chunks into a batch
 * as separate sequences, the same sums in another order), on the CPU. Collected: per weight
 * matrix of the layers (names starting "blk."; not the output head, as without --process-output)
 * Σ x² and Σ x per input column and the tokens seen, per expert for MUL_MAT_ID.
 */
export function llamaImatrix(modelPath: string, text: string, options: LlamaImatrixOptions): LlamaImatrixResult {
  const l = load();
  const { ctx: size } = options;
  const stats = new Map<string, Accumulator>();
  // Set by the callback: `as` keeps TypeScript from taking it for null until then.
  let failure = null as Error | null;
  // What collect_imatrix answers and does; an exception cannot cross into C, so it is kept for after the decode.
  const callback = koffi.register((ptr: unknown, ask: boolean) => {
    try {
      const t = tensorAt(ptr);
      if (ask) {
        if (t.op === 'MUL_MAT_ID') return true;
        if (t.op !== 'MUL_MAT') return false;
        const src1 = tensorAt(t.src[1]);
        // llama-imatrix skips small batches (< 16 tokens) and non-f32 inputs.
        if (src1.ne[1]! < 16 || src1.type !== GGML_TYPE_F32) return false;
        return weightName(tensorAt(t.src[0]).name).startsWith('blk.');
      }
      collect(stats, t);
    } catch (err) {
      failure ??= err instanceof Error ? err : new Error(String(err));
    }
    return true;
  }, koffi.pointer(EvalCallback));
  const from = log.length;
  const llamaLog = () => log.splice(from).join('');
  const model = l.loadModel(modelPath, { ...modelParams(), n_gpu_layers: 0 });
  if (!model) {
    koffi.unregister(callback);
    throw new Error(`${modelPath}: llama.cpp could not load the model:\n${llamaLog()}`);
  }
  const threads = options.threads ?? 2;
  const kvType = options.kvF32 ? GGML_TYPE_F32 : GGML_TYPE_F16;
  const context = l.initContext(model, {
    ...contextParams(),
    n_ctx: size,
    n_batch: size,
    n_ubatch: size,
    n_threads: threads,
    n_threads_batch: threads,
    cb_eval: callback,
    cb_eval_user_data: null,
    type_k: kvType,
    type_v: kvType,
    flash_attn_type: { on: 1, off: 0, auto: -1 }[options.flashAttention ?? 'auto'],
  });
  const batch = l.batchInit(size, 0, 1);
  try {
    if (!context) throw new Error(`${modelPath}: llama.cpp could not create a context:\n${llamaLog()}`);
    const chunks = chunksOf(l, model, text, size, options.chunks ?? Number.MAX_SAFE_INTEGER);
    // One sequence (id 0) for every position.
    for (const seq of koffi.decode(batch.seq_id, 'void *', size) as unknown[]) koffi.encode(seq, 'int32_t', 0);
    for (const ids of chunks) {
      l.clearMemory(l.memory(context), true);
      koffi.encode(batch.token, koffi.array('int32_t', size), ids);
      koffi.encode(
        batch.pos,
        koffi.array('int32_t', size),
        ids.map((_, i) => i),
      );
      koffi.encode(batch.n_seq_id, koffi.array('int32_t', size), new Array(size).fill(1));
      // Every position an output, as llama-imatrix asks, so the last layer runs on every token.
      koffi.encode(batch.logits, koffi.array('int8_t', size), new Array(size).fill(1));
      const rc = l.decode(context, { ...batch, n_tokens: size });
      if (failure) throw failure;
      if (rc !== 0) throw new Error(`llama_decode failed (${rc}):\n${llamaLog()}`);
    }
    const weights = [...stats]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([weight, a]) => ({ weight, ...a }));
    return { chunks, weights };
  } finally {
    l.batchFree(batch);
    if (context) l.freeContext(context);
    l.freeModel(model);
    koffi.unregister(callback);
    log.splice(from);
  }
}

/** compute_imatrix's chunks: llama.cpp's tokens of `text` (add_special, no special parsing), whole chunks, BOS first in each. */
function chunksOf(l: Lib, model: unknown, text: string, size: number, maxChunks: number): number[][] {
  const vocab = l.vocab(model);
  const bytes = Buffer.byteLength(text, 'utf8');
  const tokens = new Int32Array(bytes + 2);
  const n = l.tokenize(vocab, text, bytes, tokens, tokens.length, true, false);
  if (n < 0) throw new Error(`llama_tokenize needs room for ${-n} tokens`);
  if (n < 2 * size)
    throw new Error(
      `the text tokenizes to only ${n} tokens; llama-imatrix needs at least ${2 * size} for a context of ${size}`,
    );
  const bos = l.addBos(vocab) ? l.bos(vocab) : null;
  return Array.from({ length: Math.min(maxChunks, Math.floor(n / size)) }, (_, i) => {
    const chunk = Array.from(tokens.subarray(i * size, (i + 1) * size));
    if (bos !== null) chunk[0] = bos;
    return chunk;
  });
}
