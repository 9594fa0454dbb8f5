/**
 * Quantized test models: a random F32 model's matrices quantized by llama.cpp's own
 * ggml_quantize_chunk ("pure": every 2-D and stacked 3-D expert weight to one type, except the
 * MoE routers, ffn_gate_inp, and biases (gpt-oss's expert biases are 2-D), which llama-quantize
 * always leaves alone), plus the exact reference
 * for it, an F32 copy holding every quantized tensor as llama.cpp's decoder decodes it.
 */
import { join } from 'node:path';
import { ggmlTypeByName, type GgmlType } from '../../src-main/core/ggml-types';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { llamaDequantize, llamaQuantize } from '../support/ggml-oracle';

export interface QuantizedCopies {
  /** The model with its matrices in `type`. */
  quantized: string;
  /** The same weights decoded back to F32 by llama.cpp: what the engine must reproduce. */
  exact: string;
}

/** `path` with every tensor decoded to F32 by llama.cpp's decoders (the exact reference of a file). */
export async function writeDecodedCopy(path: string, out: string): Promise<void> {
  const f32 = ggmlTypeByName('F32')!;
  const { gguf, file } = openGguf(path);
  try {
    const tensors = gguf.tensors.map((t) => ({ name: t.name, ne: t.ne, type: f32 }));
    await writeGguf(out, { kvs: gguf.kvs, tensors }, (i) => {
      const t = gguf.tensors[i]!;
      if (t.type.name === 'F32') return [gguf.tensorData(t)];
      return [new Uint8Array(llamaDequantize(t.type.id, gguf.tensorData(t).slice(), t.elements).buffer)];
    });
  } finally {
    file.close();
  }
}

export async function writeQuantizedCopies(f32Path: string, typeName: string, dir: string): Promise<QuantizedCopies> {
  if (typeName === 'F32') return { quantized: f32Path, exact: f32Path };
  const type = ggmlTypeByName(typeName);
  const f32 = ggmlTypeByName('F32')!;
  if (!type) throw new Error(`unknown type ${typeName}`);
  const { gguf, file } = openGguf(f32Path);
  try {
    const quantizedData = new Map<string, Uint8Array>();
    for (const t of gguf.tensors) {
      if (t.ne.length < 2 || !t.name.endsWith('.weight') || t.name.endsWith('.ffn_gate_inp.weight')) continue;
      const values = new Float32Array(gguf.tensorData(t).slice().buffer);
      const cols = t.ne[0]!;
      quantizedData.set(t.name, llamaQuantize(type.id, values, values.length / cols, cols));
    }
    const specs = (as: (t: { name: string }) => GgmlType) =>
      gguf.tensors.map((t) => ({ name: t.name, ne: t.ne, type: as(t) }));
    const quantized = join(dir, `${typeName}.gguf`);
    const exact = join(dir, `${typeName}-exact-f32.gguf`);
    await writeGguf(
      quantized,
      { kvs: gguf.kvs, tensors: specs((t) => (quantizedData.has(t.name) ? type : f32)) },
      (i) => {
        const t = gguf.tensors[i]!;
        return [quantizedData.get(t.name) ?? gguf.tensorData(t)];
      },
    );
    await writeGguf(exact, { kvs: gguf.kvs, tensors: specs(() => f32) }, (i) => {
      const t = gguf.tensors[i]!;
      const q = quantizedData.get(t.name);
      return [q ? new Uint8Array(llamaDequantize(type.id, q, t.elements).buffer) : gguf.tensorData(t)];
    });
    return { quantized, exact };
  } finally {
    file.close();
  }
}
