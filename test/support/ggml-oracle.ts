/**
 * llama.cpp's own ggml library, loaded from node-llama-cpp's prebuilt binaries, as the test
 * oracle: `ggml.typeSize(id)`, `ggml.fn('...signature...')` for anything else in libggml-base.
 * Tests only; the app never loads it.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import koffi from 'koffi';

const require = createRequire(import.meta.url);

function binaryPackage(): string {
  const arch = process.arch;
  switch (process.platform) {
    case 'linux':
      return `@node-llama-cpp/linux-${arch}`;
    case 'darwin':
      return arch === 'arm64' ? '@node-llama-cpp/mac-arm64-metal' : '@node-llama-cpp/mac-x64';
    case 'win32':
      return `@node-llama-cpp/win-${arch}`;
    default:
      throw new Error(`no node-llama-cpp binaries for ${process.platform}`);
  }
}

/** Path of libggml-base from node-llama-cpp's package for this platform. */
export function ggmlBasePath(): string {
  const pkg = binaryPackage();
  // The package exports only its entry (dist/index.js); the binaries sit beside dist/.
  const root = dirname(dirname(require.resolve(pkg)));
  const file =
    process.platform === 'win32'
      ? 'ggml-base.dll'
      : process.platform === 'darwin'
        ? 'libggml-base.dylib'
        : 'libggml-base.so';
  return join(root, 'bins', pkg.slice('@node-llama-cpp/'.length), file);
}

let lib: ReturnType<typeof koffi.load> | undefined;

function load(): ReturnType<typeof koffi.load> {
  return (lib ??= koffi.load(ggmlBasePath()));
}

const cache = new Map<string, (...args: unknown[]) => unknown>();

export const ggml = {
  /** Any libggml-base function by its C signature, e.g. `ggml.fn('size_t ggml_row_size(int type, int64_t ne)')`. */
  fn(signature: string): (...args: unknown[]) => unknown {
    let f = cache.get(signature);
    if (!f) cache.set(signature, (f = load().func(signature)));
    return f;
  },
  typeSize: (type: number): number => Number(ggml.fn('size_t ggml_type_size(int type)')(type)),
  blockSize: (type: number): number => Number(ggml.fn('int64_t ggml_blck_size(int type)')(type)),
  typeName: (type: number): string => ggml.fn('const char *ggml_type_name(int type)')(type) as string,
  isQuantized: (type: number): boolean => Boolean(ggml.fn('bool ggml_is_quantized(int type)')(type)),
};

/** What llama.cpp's own GGUF reader (gguf_init_from_file) sees in a file. */
export interface LlamaGgufView {
  version: number;
  alignment: number;
  dataOffset: number;
  kvs: { key: string; type: number; value: unknown }[];
  tensors: { name: string; type: number; offset: number; bytes: number }[];
}

const GGUF_STRING = 8;
const GGUF_ARRAY = 9;
const SCALAR_GETTERS: Record<number, string> = {
  0: 'uint8_t gguf_get_val_u8(void *ctx, int64_t id)',
  1: 'int8_t gguf_get_val_i8(void *ctx, int64_t id)',
  2: 'uint16_t gguf_get_val_u16(void *ctx, int64_t id)',
  3: 'int16_t gguf_get_val_i16(void *ctx, int64_t id)',
  4: 'uint32_t gguf_get_val_u32(void *ctx, int64_t id)',
  5: 'int32_t gguf_get_val_i32(void *ctx, int64_t id)',
  6: 'float gguf_get_val_f32(void *ctx, int64_t id)',
  7: 'bool gguf_get_val_bool(void *ctx, int64_t id)',
  10: 'uint64_t gguf_get_val_u64(void *ctx, int64_t id)',
  11: 'int64_t gguf_get_val_i64(void *ctx, int64_t id)',
  12: 'double gguf_get_val_f64(void *ctx, int64_t id)',
};
const ITEM_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

let initParams: unknown;

/**
 * Reads `path` with llama.cpp's gguf_init_from_file (metadata only). Returns null where
 * llama.cpp refuses the file. Array values come back as { itemType, items } with numeric items as
 * raw little-endian bytes (Uint8Array) and string items as strings.
 */
export function readWithLlamaGguf(path: string): LlamaGgufView | null {
  initParams ??= koffi.struct('gguf_init_params', { no_alloc: 'bool', ctx: 'void *' });
  const init = ggml.fn('void *gguf_init_from_file(const char *fname, gguf_init_params params)');
  const ctx = init(path, { no_alloc: true, ctx: null });
  if (!ctx) return null;
  try {
    const n = (sig: string, ...args: unknown[]) => Number(ggml.fn(sig)(ctx, ...args));
    const kvs = [];
    for (let id = 0; id < n('int64_t gguf_get_n_kv(void *ctx)'); id++) {
      const key = ggml.fn('const char *gguf_get_key(void *ctx, int64_t id)')(ctx, id) as string;
      const type = n('int gguf_get_kv_type(void *ctx, int64_t id)', id);
      let value: unknown;
      if (type === GGUF_STRING) value = ggml.fn('const char *gguf_get_val_str(void *ctx, int64_t id)')(ctx, id);
      else if (type === GGUF_ARRAY) {
        const itemType = n('int gguf_get_arr_type(void *ctx, int64_t id)', id);
        const count = n('size_t gguf_get_arr_n(void *ctx, int64_t id)', id);
        if (itemType === GGUF_STRING) {
          const get = ggml.fn('const char *gguf_get_arr_str(void *ctx, int64_t id, size_t i)');
          value = { itemType, items: Array.from({ length: count }, (_, i) => get(ctx, id, i)) };
        } else {
          const data = ggml.fn('const void *gguf_get_arr_data(void *ctx, int64_t id)')(ctx, id);
          const bytes = count * ITEM_BYTES[itemType]!;
          value = {
            itemType,
            items: bytes === 0 ? new Uint8Array(0) : new Uint8Array(koffi.view(data, bytes).slice(0)),
          };
        }
      } else value = ggml.fn(SCALAR_GETTERS[type]!)(ctx, id);
      kvs.push({ key, type, value });
    }
    const tensors = [];
    for (let id = 0; id < n('int64_t gguf_get_n_tensors(void *ctx)'); id++) {
      tensors.push({
        name: ggml.fn('const char *gguf_get_tensor_name(void *ctx, int64_t id)')(ctx, id) as string,
        type: n('int gguf_get_tensor_type(void *ctx, int64_t id)', id),
        offset: n('size_t gguf_get_tensor_offset(void *ctx, int64_t id)', id),
        bytes: n('size_t gguf_get_tensor_size(void *ctx, int64_t id)', id),
      });
    }
    return {
      version: n('uint32_t gguf_get_version(void *ctx)'),
      alignment: n('size_t gguf_get_alignment(void *ctx)'),
      dataOffset: n('size_t gguf_get_data_offset(void *ctx)'),
      kvs,
      tensors,
    };
  } finally {
    ggml.fn('void gguf_free(void *ctx)')(ctx);
  }
}

/** The name ggml uses in its row functions ("q4_K", "iq2_xxs") for a type id. */
const rowName = (type: number): string => ggml.typeName(type);

/** llama.cpp's decoder for `type`: `count` values from `src` (whole blocks), as f32. */
export function llamaDequantize(type: number, src: Uint8Array, count: number): Float32Array {
  const dst = new Float32Array(count);
  const name = rowName(type);
  const sig =
    name === 'f16'
      ? 'void ggml_fp16_to_fp32_row(const void *x, void *y, int64_t k)'
      : name === 'bf16'
        ? 'void ggml_bf16_to_fp32_row(const void *x, void *y, int64_t k)'
        : `void dequantize_row_${name}(const void *x, void *y, int64_t k)`;
  ggml.fn(sig)(src, dst, count);
  return dst;
}

/**
 * llama.cpp's quantizer (ggml_quantize_chunk): `rows` rows of `rowLength` f32 values into blocks
 * of `type`, optionally weighted by an importance matrix (one weight per column).
 */
export function llamaQuantize(
  type: number,
  src: Float32Array,
  rows: number,
  rowLength: number,
  imatrix?: Float32Array,
): Uint8Array {
  ggml.fn('void ggml_quantize_init(int type)')(type);
  const dst = new Uint8Array(((rows * rowLength) / ggml.blockSize(type)) * ggml.typeSize(type));
  const quantize = ggml.fn(
    'size_t ggml_quantize_chunk(int type, const void *src, void *dst, int64_t start, int64_t nrows, int64_t n_per_row, const void *imatrix)',
  );
  const written = Number(quantize(type, src, dst, 0, rows, rowLength, imatrix ?? null));
  if (written !== dst.byteLength)
    throw new Error(`ggml_quantize_chunk wrote ${written} bytes, expected ${dst.byteLength}`);
  return dst;
}
