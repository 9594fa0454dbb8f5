import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { predictExport } from '../../src-main/core/export-size';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { llamaFileTypeId, llamaFileTypeName } from '../../src-main/core/llama-file-types';
import {
  fileTypeNeedsImatrix,
  planQuantization,
  QUANT_FILE_TYPES,
  type QuantFileType,
  type RecipeOptions,
} from '../../src-main/core/quant-recipes';
import { openGguf } from '../../src-main/node/gguf-io';
import { quantizeFile } from '../../src-main/node/quantize';
import { defaultQuantizeParams, llamaModelQuantize } from '../support/llama-quantize';
import { STORIES_260K } from '../support/paths';
import { writeRandomModel, type ModelShape } from '../support/test-models';

const type = (name: string) => ggmlTypeByName(name)!;

/** Test models: each shape exercises other rules of the mixtures. */
const MODELS: Record<string, ModelShape | string> = {
  // GQA 4 (n_gqa >= 4 rules), rows a multiple of 256, 8 layers (use_more_bits pattern).
  'dense-gqa': { nLayer: 8, nEmbd: 256, nFf: 768, nHead: 8, nHeadKv: 2 },
  // No GQA, 16 layers: the n/16 and n/8 layer thresholds differ.
  deep: { nLayer: 16, nEmbd: 256, nFf: 256, nHead: 4, headDim: 32 },
  // ffn_down rows of 704: not a multiple of 256, so k-quants fall back to 32-block types.
  'odd-rows': { nLayer: 4, nEmbd: 256, nFf: 704, nHead: 4 },
  // No output.weight: token_embd is treated as the output matrix. F16 weights in.
  tied: { nLayer: 4, nEmbd: 256, nFf: 512, nHead: 8, tiedEmbeddings: true, weightType: 'F16' },
  // MoE with stacked experts: the ffn layer comes from the tensor name.
  moe4: { nLayer: 4, nEmbd: 256, nFf: 256, nHead: 8, nHeadKv: 2, nExpert: 4 },
  // 8 experts (Mixtral-like): attn_v/attn_k to Q8_0, attn_output bumped.
  moe8: { nLayer: 4, nEmbd: 256, nFf: 128, nHead: 8, nHeadKv: 2, nExpert: 8 },
  // Falcon: fused attn_qkv, its own ffn_down and output rules.
  falcon: { arch: 'falcon', nLayer: 4, nEmbd: 256, nFf: 512, nHead: 8, nHeadKv: 1 },
  // 80 layers with GQA: llama.cpp calls it a 70B and gives attn_v more bits.
  '70b': { nLayer: 80, nEmbd: 256, nFf: 32, nHead: 8, nHeadKv: 2, headDim: 8 },
  // A real model: rows of 64 and 172 (172 is not a multiple of 32: F16 fallback).
  stories260K: STORIES_260K,
};

let dir: string;
const paths = new Map<string, string>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gufo-recipes-'));
  for (const [name, shape] of Object.entries(MODELS)) {
    if (typeof shape === 'string') {
      paths.set(name, shape);
    } else {
      const path = join(dir, `${name}.gguf`);
      await writeRandomModel(path, { ...shape, name });
      paths.set(name, path);
    }
  }
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Weights of 1 for every matrix of the model (ne[0] per expert): lets llama.cpp run the mixtures that need an imatrix. */
function unitImatrix(path: string): Map<string, Float32Array> {
  const { gguf, file } = openGguf(path);
  try {
    return new Map(
      gguf.tensors
        .filter((t) => t.ne.length >= 2)
        .map((t) => [t.name, new Float32Array(Number(t.ne[0]) * Number(t.ne[2] ?? 1)).fill(1)]),
    );
  } finally {
    file.close();
  }
}

/**
 * File types llama.cpp takes seconds per test model to quantize (IQ1_M's exhaustive split search;
 * the IQ2_S, IQ2_M and IQ3 lattice searches, about 45 s for IQ2_S and IQ2_M over these models):
 * compared by a dry run, which decides and logs every tensor's type the same way and quantizes
 * nothing. test/node/quantize-low-bit.test.ts compares their bytes.
 */
const DRY_RUN: ReadonlySet<QuantFileType> = new Set(['IQ1_M', 'IQ2_S', 'IQ2_M', 'IQ3_M', 'IQ3_S', 'IQ3_XS', 'IQ3_XXS']);

/**
 * The one model llama.cpp really quantizes to each other file type: its written file gives the
 * tensor types, the file type and the quantization version (the latter two the same for every
 * model). The other models are compared by a dry run too: the quantizing itself, 100 to 1000
 * times the dry run's time, only repeated the file-type checks.
 */
const WRITTEN_MODEL = 'odd-rows';

/** Each tensor's type, in file order, from a dry run's log: "[ 3/ 20] blk.0.attn_k.weight - [...], type = f16, size = ... MiB -> ... MiB (iq1_m)". */
function dryRunTypes(log: string): string[] {
  const lines = log.matchAll(
    /\[\s*\d+\/\s*\d+\]\s+(\S+)\s+- \[[^\]]*\], type =\s*(\w+), [^\n]*?size = [^\n]*?(?:\((\w+)\))?$/gm,
  );
  return [...lines].map(([, name, from, to]) => `${name}: ${type((to ?? from)!.toUpperCase()).name}`);
}

/** What llama.cpp's quantizer gives the model, next to our plan for it (given an importance matrix when `options.hasImatrix`). */
function compare(model: string, fileType: QuantFileType, options: RecipeOptions = {}, allowRequantize = false) {
  const input = paths.get(model)!;
  const dryRun = DRY_RUN.has(fileType) || model !== WRITTEN_MODEL;
  const out = join(dir, `${model}-${fileType}-${Math.random().toString(36).slice(2)}.gguf`);
  const { gguf: source, file: sourceFile } = openGguf(input);
  let plan;
  try {
    plan = planQuantization(source, fileType, options);
  } finally {
    sourceFile.close();
  }
  const result = llamaModelQuantize(input, out, llamaFileTypeId(fileType)!, {
    imatrix: options.hasImatrix ? unitImatrix(input) : undefined,
    outputTensorType: options.outputTensorType?.id,
    tokenEmbeddingType: options.tokenEmbeddingType?.id,
    pure: options.pure,
    leaveOutputTensor: options.leaveOutputTensor,
    allowRequantize,
    dryRun,
  });
  if (!result.ok) throw new Error(`llama.cpp refused ${model} → ${fileType}:\n${result.log.slice(-4000)}`);
  const ours = plan.tensors.map((t) => `${t.name}: ${t.to.name}`);
  // llama.cpp counts the tensors that needed a fallback type.
  const fallbacks = /(\d+) of \d+ tensor\(s\) required fallback/.exec(result.log)?.[1] ?? '0';
  expect(plan.tensors.filter((t) => t.fallbackFrom !== null).length).toBe(Number(fallbacks));
  if (dryRun) {
    expect(ours).toEqual(dryRunTypes(result.log));
    return plan;
  }
  const { gguf, file } = openGguf(out);
  try {
    const theirs = gguf.tensors.map((t) => `${t.name}: ${t.type.name}`);
    expect(ours).toEqual(theirs);
    expect(plan.fileTypeId).toBe(gguf.getNumber('general.file_type'));
    expect(plan.quantizationVersion).toBe(gguf.getNumber('general.quantization_version'));
    return plan;
  } finally {
    file.close();
    rmSync(out, { force: true });
  }
}

describe('llama_model_quantize_params', () => {
  it('has the layout llama.cpp uses (checked against its defaults)', () => {
    const { size, params } = defaultQuantizeParams();
    expect(size).toBe(64);
    expect(params).toMatchObject({
      nthread: 0,
      ftype: 7,
      output_tensor_type: 43,
      token_embedding_type: 43,
      quantize_output_tensor: true,
    });
  });
});

describe('file type ids', () => {
  it('names and ids round-trip', () => {
    for (const ft of QUANT_FILE_TYPES) expect(llamaFileTypeName(llamaFileTypeId(ft)!)).toBe(ft);
    expect(llamaFileTypeId('q4_k_m')).toBe(15);
    expect(llamaFileTypeId('F16')).toBe(1);
    expect(llamaFileTypeId('BF16')).toBe(32);
    expect(llamaFileTypeId('IQ4_XS')).toBe(30);
    expect(llamaFileTypeId('Q9_Z')).toBeUndefined();
  });
});

describe.each(Object.keys(MODELS))('recipes match llama-quantize on %s', (model) => {
  it.each(QUANT_FILE_TYPES)('%s', (fileType) => {
    compare(model, fileType, { hasImatrix: fileTypeNeedsImatrix(fileType) });
  });
});

// An importance matrix changes some rules (IQ4_NL/IQ4_XS keep the first ffn_down layers at the
// default, Q4_0/Q5_0 bump them to Q4_1/Q5_1): shapes with 8+ layers, so the first eighth is not empty.
// The lattice mixtures are compared with one above already.
describe.each(['dense-gqa', 'deep'])('recipes with an importance matrix match llama-quantize on %s', (model) => {
  it.each(QUANT_FILE_TYPES.filter((fileType) => !fileTypeNeedsImatrix(fileType)))('%s', (fileType) => {
    compare(model, fileType, { hasImatrix: true });
  });
});

// IQ3_XXS has rules for a run without an importance matrix (attn_v IQ3_S, ffn_down Q4_K/Q3_K):
// llama-quantize refuses such a run, but its dry run plans it, as the export's size estimate does.
describe.each(['dense-gqa', 'deep'])(
  "the IQ3_XXS recipe without an importance matrix matches llama-quantize's dry run on %s",
  (model) => {
    it('IQ3_XXS', () => {
      compare(model, 'IQ3_XXS', { hasImatrix: false });
    });
  },
);

describe('gufo quantize --imatrix', () => {
  it('writes the mixture llama.cpp gives with an importance matrix, in the bytes the export predicts', async () => {
    const input = paths.get('deep')!;
    const imatrix = unitImatrix(input);
    const out = join(dir, 'deep-q4_0-imatrix.gguf');
    const reference = join(dir, 'deep-q4_0-imatrix-llama.gguf');
    const report = await quantizeFile(input, out, 'Q4_0', { imatrix });
    expect(llamaModelQuantize(input, reference, llamaFileTypeId('Q4_0')!, { imatrix }).ok).toBe(true);
    const typesOf = (path: string) => {
      const { gguf, file } = openGguf(path);
      try {
        return gguf.tensors.map((t) => `${t.name}: ${t.type.name}`);
      } finally {
        file.close();
      }
    };
    const ours = typesOf(out);
    expect(ours).toEqual(typesOf(reference));
    expect(ours).toContain('blk.0.ffn_down.weight: Q4_1');
    const { gguf, file } = openGguf(input);
    try {
      expect(predictExport(gguf, 'Q4_0', { imatrixEntries: imatrix.size }).fileBytes).toBe(report.bytesOut);
    } finally {
      file.close();
    }
  });
});

describe('recipe overrides match llama-quantize', () => {
  it('--output-tensor-type', () => {
    const plan = compare('dense-gqa', 'Q4_K_M', { outputTensorType: type('Q8_0') });
    expect(plan.tensors.find((t) => t.name === 'output.weight')!.to.name).toBe('Q8_0');
  });
  it('--token-embedding-type', () => {
    const plan = compare('dense-gqa', 'Q4_K_M', { tokenEmbeddingType: type('Q4_0') });
    expect(plan.tensors.find((t) => t.name === 'token_embd.weight')!.to.name).toBe('Q4_0');
  });
  it('both, on a mixture and on F16', () => {
    compare('dense-gqa', 'Q3_K_M', { outputTensorType: type('Q5_K'), tokenEmbeddingType: type('Q6_K') });
    compare('dense-gqa', 'F16', { outputTensorType: type('Q8_0'), tokenEmbeddingType: type('Q4_K') });
  });
  it('--output-tensor-type on tied embeddings goes through the mixture (with fallbacks)', () => {
    compare('tied', 'Q4_0', { outputTensorType: type('Q5_K') });
  });
  it('--output-tensor-type is ignored for tied embeddings of an F16 file', () => {
    const plan = compare('tied', 'F16', { outputTensorType: type('Q8_0') });
    expect(plan.tensors.find((t) => t.name === 'token_embd.weight')!.to.name).toBe('F16');
  });
  it('--pure', () => {
    for (const ft of ['Q4_K_M', 'Q3_K_M', 'Q2_K', 'IQ4_XS'] as const) {
      compare('dense-gqa', ft, { pure: true });
      compare('odd-rows', ft, { pure: true });
    }
    compare('tied', 'Q5_K_M', { pure: true });
  });
  it('--leave-output-tensor', () => {
    const plan = compare('dense-gqa', 'Q4_K_M', { leaveOutputTensor: true });
    expect(plan.tensors.find((t) => t.name === 'output.weight')!.to.name).toBe('F32');
    compare('tied', 'Q4_K_M', { leaveOutputTensor: true });
  });
});

describe('requantizing', () => {
  it('plans a Q8_0 file to Q4_K_M as llama-quantize --allow-requantize does', () => {
    const q8 = join(dir, 'dense-gqa-q8_0.gguf');
    expect(llamaModelQuantize(paths.get('dense-gqa')!, q8, llamaFileTypeId('Q8_0')!).ok).toBe(true);
    paths.set('dense-gqa-q8_0', q8);
    const plan = compare('dense-gqa-q8_0', 'Q4_K_M', {}, true);
    expect(plan.tensors.find((t) => t.name === 'blk.0.attn_q.weight')).toMatchObject({
      from: type('Q8_0'),
      to: type('Q4_K'),
    });
    // Without --allow-requantize llama.cpp refuses, as a caller of the plan should.
    expect(llamaModelQuantize(q8, join(dir, 'refused.gguf'), llamaFileTypeId('Q4_K_M')!).ok).toBe(false);
  });
});

describe('planQuantization', () => {
  it('refuses an override type whose blocks do not fit the rows (llama.cpp would abort)', () => {
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      expect(() => planQuantization(gguf, 'Q4_0', { outputTensorType: type('Q4_K') })).toThrow(/output\.weight.*Q4_K/);
    } finally {
      file.close();
    }
  });
});
