/**
 * llama.cpp's own quantizer (`llama_model_quantize`, what `llama-quantize` runs) from
 * node-llama-cpp's prebuilt libllama, called through koffi: the oracle for the quantization
 * recipes. Tests only; the app never loads it.
 *
 *   const r = llamaModelQuantize(inPath, outPath, 15); // LLAMA_FTYPE_MOSTLY_Q4_K_M
 *   if (!r.ok) console.log(r.log);
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import koffi from 'koffi';
import { GGML_TYPE_COUNT } from '../../src-main/core/ggml-types';
import { ggmlBasePath } from './ggml-oracle';

/**
 * struct llama_model_quantize_params as llama.h of node-llama-cpp's llama.cpp (v0.4.0) has it.
 * Checked against llama_model_quantize_default_params() in `defaultQuantizeParams`.
 */
const QuantizeParams = koffi.struct('gufo_llama_model_quantize_params', {
  nthread: 'int32_t',
  ftype: 'int', // enum llama_ftype
  output_tensor_type: 'int', // enum ggml_type; GGML_TYPE_COUNT = unset
  token_embedding_type: 'int', // enum ggml_type; GGML_TYPE_COUNT = unset
  allow_requantize: 'bool',
  quantize_output_tensor: 'bool',
  only_copy: 'bool',
  pure: 'bool',
  keep_split: 'bool',
  dry_run: 'bool',
  imatrix: 'void *', // const llama_model_imatrix_data *
  kv_overrides: 'void *', // const llama_model_kv_override *
  tt_overrides: 'void *', // const llama_model_tensor_override *
  prune_layers: 'void *', // const int32_t *
  max_buf_size: 'size_t',
});

export interface QuantizeParamsValues {
  nthread: number;
  ftype: number;
  output_tensor_type: number;
  token_embedding_type: number;
  allow_requantize: boolean;
  quantize_output_tensor: boolean;
  only_copy: boolean;
  pure: boolean;
  keep_split: boolean;
  dry_run: boolean;
  imatrix: unknown;
  kv_overrides: unknown;
  tt_overrides: unknown;
  prune_layers: unknown;
  max_buf_size: number | bigint;
}

/** More bytes than the struct needs: a return buffer too large is harmless, one too small is not. */
const RAW_BYTES = 256;
const RawParams = koffi.struct('gufo_llama_model_quantize_params_raw', { raw: koffi.array('uint8_t', RAW_BYTES) });

/** Path of libllama beside libggml-base in node-llama-cpp's package (the file name carries a version). */
export function libllamaPath(): string {
  const dir = dirname(ggmlBasePath());
  const file = readdirSync(dir).find((f) => /^(lib)?llama(\.v[\d.]+)?\.(so|dylib|dll)$/.test(f));
  if (!file) throw new Error(`no libllama in ${dir}`);
  return join(dir, file);
}

interface Lib {
  quantize: (inp: string, out: string, params: QuantizeParamsValues) => number;
  defaults: () => { raw: Uint8Array };
}

let lib: Lib | undefined;
const log: string[] = [];

function load(): Lib {
  if (lib) return lib;
  const so = koffi.load(libllamaPath());
  so.func('void llama_backend_init(void)')();
  // Collect llama.cpp's log instead of letting it flood stderr; each call returns its part.
  const LogCallback = koffi.proto('void gufo_llama_log_callback(int level, const char *text, void *user_data)');
  const callback = koffi.register((_level: number, text: string) => void log.push(text), koffi.pointer(LogCallback));
  so.func('void llama_log_set(gufo_llama_log_callback *cb, void *user_data)')(callback, null);
  lib = {
    quantize: so.func(
      'uint32_t llama_model_quantize(const char *fname_inp, const char *fname_out, const gufo_llama_model_quantize_params *params)',
    ) as Lib['quantize'],
    defaults: so.func('llama_model_quantize_default_params', RawParams, []) as Lib['defaults'],
  };
  return lib;
}

/**
 * llama_model_quantize_default_params(), decoded with our struct layout, plus its raw bytes.
 * Throws when the bytes do not look like this layout (a llama.cpp with another struct).
 */
export function defaultQuantizeParams(): { params: QuantizeParamsValues; size: number; raw: Uint8Array } {
  const { raw } = load().defaults();
  const size = koffi.sizeof(QuantizeParams);
  const params = koffi.decode(raw, QuantizeParams) as QuantizeParamsValues;
  const expected: Partial<QuantizeParamsValues> = {
    nthread: 0,
    ftype: 7, // LLAMA_FTYPE_MOSTLY_Q8_0
    output_tensor_type: GGML_TYPE_COUNT,
    token_embedding_type: GGML_TYPE_COUNT,
    allow_requantize: false,
    quantize_output_tensor: true,
    only_copy: false,
    pure: false,
    keep_split: false,
    dry_run: false,
  };
  for (const [k, v] of Object.entries(expected)) {
    if (params[k as keyof QuantizeParamsValues] !== v) {
      throw new Error(
        `llama_model_quantize_params layout mismatch: ${k} = ${String(params[k as keyof QuantizeParamsValues])}, expected ${String(v)}`,
      );
    }
  }
  // The last field: LLAMA_QUANT_MAX_BUF_SIZE (8 GiB). Right here means every field before it lines up.
  if (BigInt(params.max_buf_size) !== 8n * 2n ** 30n)
    throw new Error(`llama_model_quantize_params layout mismatch: max_buf_size = ${params.max_buf_size}`);
  for (const p of [params.imatrix, params.kv_overrides, params.tt_overrides, params.prune_layers]) {
    if (p !== null && p !== 0n) throw new Error('llama_model_quantize_params layout mismatch: a pointer field is set');
  }
  return { params, size, raw };
}

export interface QuantizeOptions {
  /** --output-tensor-type (a ggml type id). */
  outputTensorType?: number;
  /** --token-embedding-type (a ggml type id). */
  tokenEmbeddingType?: number;
  /** --pure */
  pure?: boolean;
  /** --leave-output-tensor */
  leaveOutputTensor?: boolean;
  /** --allow-requantize */
  allowRequantize?: boolean;
  /** Threads (default 1: these machines are small and shared). */
  nthread?: number;
  /** --dry-run: decide every tensor's type and log it, quantize nothing, write no file. */
  dryRun?: boolean;
  /** --tensor-type PATTERN=TYPE, in order (type: a ggml type id). */
  tensorTypes?: { pattern: string; type: number }[];
  /** --imatrix: importance weights per tensor name (ne[0] × experts values each). */
  imatrix?: ReadonlyMap<string, Float32Array>;
}

/** struct llama_model_imatrix_data { const char * name; const float * data; size_t size; } */
const ImatrixData = koffi.struct('gufo_llama_model_imatrix_data', { name: 'void *', data: 'void *', size: 'size_t' });

/** The entries as a C array ended by a null name, in memory koffi allocated (freed by the caller with `free`). */
function imatrixEntries(imatrix: ReadonlyMap<string, Float32Array>): { array: unknown; free: () => void } {
  const owned: unknown[] = [];
  const entries = [...imatrix].map(([name, weights]) => {
    const bytes = Buffer.from(`${name}\0`, 'utf8');
    const namePtr: unknown = koffi.alloc('uint8_t', bytes.length);
    koffi.encode(namePtr, koffi.array('uint8_t', bytes.length), [...bytes]);
    const dataPtr: unknown = koffi.alloc('float', Math.max(1, weights.length));
    koffi.encode(dataPtr, koffi.array('float', weights.length), Array.from(weights));
    owned.push(namePtr, dataPtr);
    return { name: namePtr, data: dataPtr, size: weights.length };
  });
  const array: unknown = koffi.alloc(ImatrixData, entries.length + 1);
  koffi.encode(array, koffi.array(ImatrixData, entries.length + 1), [...entries, { name: null, data: null, size: 0 }]);
  return { array, free: () => [array, ...owned].forEach((p) => koffi.free(p)) };
}

/** struct llama_model_tensor_override { const char * pattern; enum ggml_type type; } */
const TensorOverride = koffi.struct('gufo_llama_model_tensor_override', { pattern: 'void *', type: 'int' });

/** A C array of overrides ended by a null pattern, in memory koffi allocated (freed by the caller with `free`). */
function tensorOverrides(list: { pattern: string; type: number }[]): { array: unknown; free: () => void } {
  const strings = list.map((o) => {
    const bytes = Buffer.from(`${o.pattern}\0`, 'utf8');
    const ptr: unknown = koffi.alloc('uint8_t', bytes.length);
    koffi.encode(ptr, koffi.array('uint8_t', bytes.length), [...bytes]);
    return ptr;
  });
  const type = koffi.array(TensorOverride, list.length + 1);
  const array: unknown = koffi.alloc(TensorOverride, list.length + 1);
  koffi.encode(array, type, [
    ...list.map((o, i) => ({ pattern: strings[i], type: o.type })),
    { pattern: null, type: 0 },
  ]);
  return { array, free: () => [array, ...strings].forEach((p) => koffi.free(p)) };
}

export interface QuantizeResult {
  ok: boolean;
  /** llama.cpp's log lines during the call. */
  log: string;
}

/** Quantizes `inPath` to `outPath` as file type `fileTypeId` (enum llama_ftype), like llama-quantize. */
export function llamaModelQuantize(
  inPath: string,
  outPath: string,
  fileTypeId: number,
  options: QuantizeOptions = {},
): QuantizeResult {
  const { quantize } = load();
  const { params } = defaultQuantizeParams();
  params.nthread = options.nthread ?? 1;
  params.ftype = fileTypeId;
  params.output_tensor_type = options.outputTensorType ?? GGML_TYPE_COUNT;
  params.token_embedding_type = options.tokenEmbeddingType ?? GGML_TYPE_COUNT;
  params.pure = options.pure ?? false;
  params.quantize_output_tensor = !options.leaveOutputTensor;
  params.allow_requantize = options.allowRequantize ?? false;
  params.dry_run = options.dryRun ?? false;
  const overrides = options.tensorTypes?.length ? tensorOverrides(options.tensorTypes) : null;
  params.tt_overrides = overrides?.array ?? null;
  const imatrix = options.imatrix ? imatrixEntries(options.imatrix) : null;
  params.imatrix = imatrix?.array ?? null;
  const from = log.length;
  let rc: number;
  try {
    rc = quantize(inPath, outPath, params);
  } finally {
    overrides?.free();
    imatrix?.free();
  }
  const text = log.splice(from).join('');
  return { ok: rc === 0, log: text };
}
