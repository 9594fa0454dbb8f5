/**
 * Models for the inspector tests: a "tensor zoo" (one tensor per type, quantized by llama.cpp's
 * own ggml_quantize_chunk, so the test knows every byte and llama.cpp's values for it) and a
 * random llama quantized by llama.cpp's llama_model_quantize (a real type mix per role).
 */
import { join } from 'node:path';
import type { ModelEntry } from '../../src-preload/api';
import { ggmlTypeByName, type GgmlType } from '../../src-main/core/ggml-types';
import { GgufType } from '../../src-main/core/gguf/values';
import { writeGguf } from '../../src-main/node/gguf-io';
import { llamaQuantize } from '../support/ggml-oracle';
import { llamaModelQuantize } from '../support/llama-quantize';
import { mulberry32 } from '../support/random';
import { writeRandomModel, type ModelShape } from '../support/test-models';
import type { TestBackend } from '../support/backend';

export interface ZooTensor {
  name: string;
  type: GgmlType;
  ne: number[];
  /** The tensor's bytes as written. */
  bytes: Uint8Array;
  /** The f32 values it was made from. */
  source: Float32Array;
}

/** Types quantized by llama.cpp (F32 is written as is). */
export const ZOO_TYPES = [
  'F32',
  'F16',
  'BF16',
  'Q4_0',
  'Q4_1',
  'Q5_0',
  'Q5_1',
  'Q8_0',
  'Q2_K',
  'Q3_K',
  'Q4_K',
  'Q5_K',
  'Q6_K',
  'IQ4_NL',
  'IQ4_XS',
  'MXFP4',
  'IQ2_XXS',
  'TQ2_0',
] as const;

function tensor(name: string, typeName: string, ne: number[], draw: () => number): ZooTensor {
  const type = ggmlTypeByName(typeName)!;
  const source = Float32Array.from({ length: ne.reduce((a, b) => a * b, 1) }, draw);
  const rowLength = ne[0]!;
  const bytes =
    typeName === 'F32'
      ? new Uint8Array(source.slice().buffer)
      : llamaQuantize(type.id, source, source.length / rowLength, rowLength, new Float32Array(rowLength).fill(1));
  return { name, type, ne, bytes, source };
}

/**
 * Writes the zoo to `dir`/zoo.gguf: `zoo.<type>` of shape [512, 4] per type, plus
 * `zoo.odd` (F32 [96, 8]: rows that are not whole 256-blocks), `zoo.special` (F32 with NaN and
 * infinities) and `zoo.big` (F16 [1024, 1100]: more values than a histogram samples).
 */
export async function writeTensorZoo(dir: string): Promise<{ path: string; tensors: ZooTensor[] }> {
  const rng = mulberry32(42);
  const draw = () => rng.studentT(4) * 0.05;
  const tensors = ZOO_TYPES.map((t) => tensor(`zoo.${t.toLowerCase()}`, t, [512, 4], draw));
  tensors.push(tensor('zoo.odd', 'F32', [96, 8], draw));
  const special = tensor('zoo.special', 'F32', [32, 2], draw);
  const f = new Float32Array(special.bytes.buffer);
  f[1] = NaN;
  f[2] = Infinity;
  f[40] = -Infinity;
  special.source = f.slice();
  tensors.push(special);
  tensors.push(tensor('zoo.big', 'F16', [1024, 1100], () => rng.gaussian() * 0.02));
  const path = join(dir, 'zoo.gguf');
  const kvs = [{ key: 'general.name', type: GgufType.STRING, value: 'tensor zoo' }];
  await writeGguf(path, { kvs, tensors: tensors.map(({ name, type, ne }) => ({ name, type, ne })) }, (i) => [
    tensors[i]!.bytes,
  ]);
  return { path, tensors };
}

/** LLAMA_FTYPE_MOSTLY_Q4_K_M. */
const Q4_K_M = 15;

const MIXED_SHAPE: ModelShape = { nLayer: 3, nEmbd: 256, nFf: 512, nHead: 4, nHeadKv: 2, name: 'mixed' };

/** A random llama of MIXED_SHAPE quantized to Q4_K_M by llama.cpp, written to `dir`/mixed.gguf (its F32 source to `scratch`). */
export async function writeMixedModel(dir: string, scratch: string): Promise<string> {
  const source = join(scratch, 'mixed-f32.gguf');
  await writeRandomModel(source, MIXED_SHAPE);
  const path = join(dir, 'mixed.gguf');
  const result = llamaModelQuantize(source, path, Q4_K_M);
  if (!result.ok) throw new Error(`llama_model_quantize failed:\n${result.log}`);
  return path;
}

/** The library entry of `fileName`, after a scan. */
export async function modelNamed(b: TestBackend, fileName: string): Promise<ModelEntry> {
  const model = (await b.api.listModels()).find((m) => m.fileName === fileName);
  if (!model) throw new Error(`${fileName} is not in the library`);
  return model;
}
