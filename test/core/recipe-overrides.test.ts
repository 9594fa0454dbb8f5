/**
 * Custom recipes (--tensor-type PATTERN=TYPE with --pure, --output-tensor-type,
 * --token-embedding-type): the planned type of every tensor, and the bytes written, equal
 * llama.cpp's llama_model_quantize given the same overrides (tt_overrides through koffi).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { llamaFileTypeId } from '../../src-main/core/llama-file-types';
import { planQuantization, type QuantFileType, type RecipeOptions } from '../../src-main/core/quant-recipes';
import { parseTensorTypeArg, resolveOverrides } from '../../src-main/core/recipe-overrides';
import { openGguf } from '../../src-main/node/gguf-io';
import { quantizeFile } from '../../src-main/node/quantize';
import { llamaModelQuantize } from '../support/llama-quantize';
import { STORIES_260K } from '../support/paths';
import { writeRandomModel } from '../support/test-models';

const type = (name: string) => ggmlTypeByName(name)!;
const tt = (...args: string[]) => args.map(parseTensorTypeArg);

let dir: string;
const models: Record<string, string> = { stories260K: STORIES_260K };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gufo-recipe-overrides-'));
  // 8 layers and GQA 4: the Q4_K_M mixture bumps attn_v/ffn_down in some layers (use_more_bits).
  models.dense = join(dir, 'dense.gguf');
  await writeRandomModel(models.dense, { nLayer: 8, nEmbd: 256, nFf: 768, nHead: 8, nHeadKv: 2, name: 'dense' });
  // ffn_down rows of 704: k-quant overrides there fall back to 32-block types.
  models.odd = join(dir, 'odd.gguf');
  await writeRandomModel(models.odd, { nLayer: 4, nEmbd: 256, nFf: 704, nHead: 4, name: 'odd' });
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Our plan next to the tensors llama.cpp writes with the same options; returns our plan and llama.cpp's file. */
function compare(model: string, fileType: QuantFileType, options: RecipeOptions) {
  const input = models[model]!;
  const { gguf: source, file: sourceFile } = openGguf(input);
  const plan = (() => {
    try {
      return planQuantization(source, fileType, options);
    } finally {
      sourceFile.close();
    }
  })();
  const theirs = join(dir, `${model}-${fileType}-${Math.random().toString(36).slice(2)}.gguf`);
  const result = llamaModelQuantize(input, theirs, llamaFileTypeId(fileType)!, {
    outputTensorType: options.outputTensorType?.id,
    tokenEmbeddingType: options.tokenEmbeddingType?.id,
    pure: options.pure,
    tensorTypes: options.tensorTypes?.map((t) => ({ pattern: t.pattern, type: t.type.id })),
  });
  if (!result.ok) throw new Error(`llama.cpp refused ${model} → ${fileType}:\n${result.log.slice(-4000)}`);
  const { gguf, file } = openGguf(theirs);
  try {
    expect(plan.tensors.map((t) => `${t.name}: ${t.to.name}`)).toEqual(
      gguf.tensors.map((t) => `${t.name}: ${t.type.name}`),
    );
    const fallbacks = /(\d+) of \d+ tensor\(s\) required fallback/.exec(result.log)?.[1] ?? '0';
    expect(plan.tensors.filter((t) => t.fallbackFrom !== null).length).toBe(Number(fallbacks));
  } finally {
    file.close();
  }
  return { plan, theirs };
}

const planned = (plan: ReturnType<typeof planQuantization>, name: string) =>
  plan.tensors.find((t) => t.name === name)!.to.name;

describe('--tensor-type matches llama-quantize', () => {
  it('overrides a role in every layer', () => {
    const { plan } = compare('dense', 'Q4_K_M', { tensorTypes: tt('attn_v=q8_0', 'ffn_down=Q5_K') });
    for (let i = 0; i < 8; i++) {
      expect(planned(plan, `blk.${i}.attn_v.weight`)).toBe('Q8_0');
      expect(planned(plan, `blk.${i}.ffn_down.weight`)).toBe('Q5_K');
    }
  });

  it('takes regular expressions, first match wins, and the mixture counts only the tensors it chose', () => {
    // Layers 0-3's attn_v overridden: the mixture's attn_v counter starts at layer 4's.
    const { plan } = compare('dense', 'Q4_K_M', {
      tensorTypes: tt('blk\\.[0-3]\\.attn_v=q4_0', 'blk\\.[0-9]+\\.attn_(v|k)=Q8_0', 'attn_v=q2_k'),
    });
    expect(planned(plan, 'blk.0.attn_v.weight')).toBe('Q4_0');
    expect(planned(plan, 'blk.5.attn_v.weight')).toBe('Q8_0');
    expect(planned(plan, 'blk.5.attn_k.weight')).toBe('Q8_0');
    compare('dense', 'Q4_K_M', { tensorTypes: tt('blk\\.[0-3]\\.attn_v=q4_0') });
    compare('dense', 'Q3_K_M', { tensorTypes: tt('blk\\.[0-2]\\.ffn_down=q8_0', '^output=q4_k') });
  });

  it('keeps the fallback for rows too short for the type', () => {
    const { plan } = compare('odd', 'Q4_K_M', { tensorTypes: tt('ffn_down=q3_k', 'ffn_up=iq4_xs') });
    expect(plan.tensors.find((t) => t.name === 'blk.0.ffn_down.weight')).toMatchObject({
      to: type('Q4_0'),
      fallbackFrom: type('Q3_K'),
    });
    compare('stories260K', 'Q4_0', { tensorTypes: tt('ffn=q6_k', 'attn=q4_k') });
  });

  it('with --pure, --output-tensor-type and --token-embedding-type', () => {
    compare('dense', 'Q5_K_M', { pure: true, tensorTypes: tt('attn_q=q8_0') });
    compare('dense', 'Q4_K_S', {
      outputTensorType: type('Q8_0'),
      tokenEmbeddingType: type('Q4_0'),
      tensorTypes: tt('output=q4_k', 'token_embd=q2_k', 'attn=q6_k'),
    });
  });

  it('is ignored by F16 files, as in llama.cpp', () => {
    const { plan } = compare('dense', 'F16', { tensorTypes: tt('attn_v=q8_0') });
    expect(planned(plan, 'blk.0.attn_v.weight')).toBe('F16');
  });

  it('writes the same tensor bytes as llama.cpp', async () => {
    const options = {
      tensorTypes: tt('blk\\.[0-3]\\.attn_v=q4_0', 'ffn_down=q3_k', 'attn_output=q8_0'),
      outputTensorType: type('Q5_K'),
    };
    const { theirs } = compare('odd', 'Q4_K_M', options);
    const ours = join(dir, 'ours.gguf');
    await quantizeFile(models.odd!, ours, 'Q4_K_M', options);
    const a = openGguf(ours);
    const b = openGguf(theirs);
    try {
      for (const t of b.gguf.tensors) {
        const mine = a.gguf.tensor(t.name)!;
        expect(mine.type.name, t.name).toBe(t.type.name);
        expect(Buffer.from(a.gguf.tensorData(mine)).equals(Buffer.from(b.gguf.tensorData(t))), t.name).toBe(true);
      }
    } finally {
      a.file.close();
      b.file.close();
    }
  });
});

describe('bad overrides', () => {
  it('names the argument and what is wrong', () => {
    expect(() => parseTensorTypeArg('attn_v')).toThrow(
      '--tensor-type "attn_v": expected PATTERN=TYPE, e.g. attn_v=q8_0',
    );
    expect(() => parseTensorTypeArg('attn_v=')).toThrow('--tensor-type "attn_v=": the type after "=" is missing');
    expect(() => parseTensorTypeArg('=q8_0')).toThrow('tensor type "=q8_0": the pattern is empty');
    expect(() => parseTensorTypeArg('attn_v=q9_9')).toThrow('tensor type pattern "attn_v": unknown ggml type "q9_9"');
    expect(() => parseTensorTypeArg('blk.(0=q8_0')).toThrow(
      /^tensor type pattern "blk\.\(0" is not a valid regular expression/,
    );
    expect(() => resolveOverrides({ outputTensorType: 'Q7' })).toThrow('output tensor type: unknown ggml type "Q7"');
    expect(() => resolveOverrides({ tensorTypes: [{ pattern: '[', type: 'q8_0' }] })).toThrow(
      /tensor type pattern "\[" is not a valid/,
    );
  });

  it('lower-cases the pattern as llama-quantize does, and reads the type in any case', () => {
    expect(parseTensorTypeArg('BLK\\.0\\.ATTN_V=Q8_0')).toEqual({ pattern: 'blk\\.0\\.attn_v', type: type('Q8_0') });
  });
});
