/**
 * The inspector's views of a file — summary, metadata, tensors, layer map, memory — on the real
 * stories260K and on a random llama quantized to Q4_K_M by llama.cpp, read through a real back end.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ggmlTypeById } from '../../src-main/core/ggml-types';
import { summarizeModel } from '../../src-main/core/model-summary';
import { openGguf } from '../../src-main/node/gguf-io';
import { testBackend } from '../support/backend';
import { readWithLlamaGguf } from '../support/ggml-oracle';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';
import { modelNamed, writeMixedModel } from './inspector-fixtures';

async function storiesBackend() {
  const dir = join(tempDir(), 'models');
  mkdirSync(dir);
  copyFileSync(STORIES_260K, join(dir, 'stories.gguf'));
  const b = testBackend({ modelDirs: [dir] });
  return { b, model: await modelNamed(b, 'stories.gguf') };
}

describe('inspector: summary, metadata and memory of stories260K', () => {
  it('summarises the model as llama.cpp reads it', async () => {
    const { b, model } = await storiesBackend();
    const o = await b.api.modelOverview(model.id);
    const llama = readWithLlamaGguf(STORIES_260K)!;
    expect(o).toMatchObject({
      modelId: model.id,
      architecture: 'llama',
      version: llama.version,
      tensorCount: llama.tensors.length,
      metadataCount: llama.kvs.length,
      layers: 5,
      heads: 8,
      kvHeads: 4,
      headSize: 8,
      embeddingSize: 64,
      vocabSize: 512,
      tokenizerModel: 'llama',
      hasChatTemplate: false,
      contextLength: 2048,
    });
    const weightBytes = llama.tensors.reduce((n, t) => n + t.bytes, 0);
    expect(o.weightBytes).toBe(weightBytes);
    expect(o.parameters).toBe(292_800);
    expect(o.bitsPerWeight).toBe(32);
    expect(o.typeMix).toEqual([{ type: 'F32', tensors: 48, parameters: 292_800, bytes: weightBytes }]);
  });

  it('pages through tokenizer.ggml.tokens exactly as llama.cpp reads them', async () => {
    const { b, model } = await storiesBackend();
    const tokens = readWithLlamaGguf(STORIES_260K)!.kvs.find((kv) => kv.key === 'tokenizer.ggml.tokens')!.value as {
      items: string[];
    };
    const page = await b.api.metadataArray(model.id, 'tokenizer.ggml.tokens', 100, 50);
    expect(page).toEqual({
      key: 'tokenizer.ggml.tokens',
      itemType: 'string',
      offset: 100,
      items: tokens.items.slice(100, 150),
      total: 512,
    });
    const last = await b.api.metadataArray(model.id, 'tokenizer.ggml.tokens', 500, 50);
    expect(last.items).toEqual(tokens.items.slice(500));
    const scores = await b.api.metadataArray(model.id, 'tokenizer.ggml.token_type', 0, 4);
    expect(scores).toMatchObject({ itemType: 'int32', items: [2, 3, 3, 6], total: 512 });
    await expect(b.api.metadataArray(model.id, 'general.name', 0, 10)).rejects.toThrow(
      /stories\.gguf: metadata "general\.name" is a string, not an array/,
    );
    await expect(b.api.metadataArray(model.id, 'no.such.key', 0, 10)).rejects.toThrow(
      /no metadata key "no\.such\.key"/,
    );
    await expect(b.api.metadataArray(model.id, 'tokenizer.ggml.tokens', 0, 5000)).rejects.toThrow(
      /limit must be a whole number from 1 to 500/,
    );
  });

  it('searches keys and string values, pages the result, shows arrays by their first items', async () => {
    const { b, model } = await storiesBackend();
    const all = await b.api.modelMetadata(model.id, {});
    expect(all.total).toBe(19);
    const tokenizer = await b.api.modelMetadata(model.id, { search: 'TOKENIZER.ggml' });
    expect(tokenizer.entries.every((e) => e.key.startsWith('tokenizer.ggml.'))).toBe(true);
    expect(tokenizer.total).toBe(all.entries.filter((e) => e.key.startsWith('tokenizer.ggml.')).length);
    const tokens = tokenizer.entries.find((e) => e.key === 'tokenizer.ggml.tokens')!;
    expect(tokens).toEqual({
      key: 'tokenizer.ggml.tokens',
      type: 'array[string]',
      value: ['<unk>', '<s>', '</s>', '<0x00>', '<0x01>', '<0x02>', '<0x03>', '<0x04>'],
      arrayLength: 512,
    });
    // "llama" is the value of tokenizer.ggml.model and general.architecture, and in every llama.* key.
    const llama = await b.api.modelMetadata(model.id, { search: 'llama' });
    expect(llama.entries.map((e) => e.key)).toContain('tokenizer.ggml.model');
    expect(llama.entries.find((e) => e.key === 'general.name')).toMatchObject({
      type: 'string',
      value: 'llama',
      arrayLength: null,
    });
    const page2 = await b.api.modelMetadata(model.id, { offset: 5, limit: 5 });
    expect(page2.entries.map((e) => e.key)).toEqual(all.entries.slice(5, 10).map((e) => e.key));
    expect(page2.total).toBe(19);
    expect((await b.api.modelMetadata(model.id, { search: 'no such thing' })).total).toBe(0);
    await expect(b.api.modelMetadata(model.id, { offset: -1 })).rejects.toThrow(/offset must be a whole number/);
  });

  it('estimates memory: weights plus the KV cache summarizeModel computes', async () => {
    const { b, model } = await storiesBackend();
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      for (const context of [1, 2048, 8192]) {
        const m = await b.api.memoryEstimate(model.id, context);
        const kv = summarizeModel(gguf, context).kvCache!;
        expect(m.kvBytes).toBe(kv.bytes);
        // 5 layers × 4 KV heads × (8 + 8) head sizes × 2 bytes per F16.
        expect(m.kvBytesPerToken).toBe(5 * 4 * 16 * 2);
        expect(m.kvBytes).toBe(640 * context);
        expect(m.totalBytes).toBe(m.weightBytes + m.kvBytes!);
        expect(m.weightBytes).toBe(gguf.tensors.reduce((n, t) => n + t.bytes, 0));
      }
    } finally {
      file.close();
    }
    // Heads of 8 hold no whole q8_0 or q4_0 block: those types are refused, f32 doubles f16.
    const m = await b.api.memoryEstimate(model.id, 1024);
    expect(m.byCacheType).toEqual([
      { type: 'f16', kvBytes: 640 * 1024, savedBytes: 0, problem: null },
      {
        type: 'q8_0',
        kvBytes: null,
        savedBytes: null,
        problem: "a q8_0 KV cache needs a head size that is a multiple of 32; this model's heads have 8",
      },
      {
        type: 'q4_0',
        kvBytes: null,
        savedBytes: null,
        problem: "a q4_0 KV cache needs a head size that is a multiple of 32; this model's heads have 8",
      },
      { type: 'f32', kvBytes: 1280 * 1024, savedBytes: -640 * 1024, problem: null },
    ]);
    await expect(b.api.memoryEstimate(model.id, 0)).rejects.toThrow(/context must be a whole number/);
    await expect(b.api.memoryEstimate(model.id, 1.5)).rejects.toThrow(/context must be a whole number/);
  });

  it('estimates what q8_0 and q4_0 KV caches save against f16 (34 and 18 bytes a block of 32)', async () => {
    const dir = join(tempDir(), 'models');
    mkdirSync(dir);
    // 2 layers, 2 KV heads of 32.
    await writeRandomModel(join(dir, 'heads-32.gguf'), { nLayer: 2, nEmbd: 128, nFf: 128, nHead: 4, nHeadKv: 2 });
    const b = testBackend({ modelDirs: [dir] });
    const model = await modelNamed(b, 'heads-32.gguf');
    const m = await b.api.memoryEstimate(model.id, 4096);
    const elements = 4096 * 2 * 2 * 32 * 2; // tokens × layers × KV heads × head size × (K and V)
    expect(m.kvBytes).toBe(elements * 2);
    expect(m.byCacheType.map(({ type, kvBytes, savedBytes }) => [type, kvBytes, savedBytes])).toEqual([
      ['f16', elements * 2, 0],
      ['q8_0', (elements / 32) * 34, elements * 2 - (elements / 32) * 34],
      ['q4_0', (elements / 32) * 18, elements * 2 - (elements / 32) * 18],
      ['f32', elements * 4, -elements * 2],
    ]);
  });

  it('names what is wrong: unknown model, unknown tensor', async () => {
    const { b, model } = await storiesBackend();
    await expect(b.api.modelOverview(9999)).rejects.toThrow(/no model with id 9999/);
    await expect(b.api.tensorBlock(model.id, 'blk.9.nothing.weight', 0)).rejects.toThrow(
      /stories\.gguf: no tensor named "blk\.9\.nothing\.weight"/,
    );
    await expect(b.api.startRequantError(model.id, 'nope')).rejects.toThrow(/no tensor named "nope"/);
  });
});

describe('inspector: tensors and the layer map of a Q4_K_M model made by llama.cpp', () => {
  async function mixedBackend() {
    const root = tempDir();
    const dir = join(root, 'models');
    mkdirSync(dir);
    const path = await writeMixedModel(dir, root);
    const b = testBackend({ modelDirs: [dir] });
    return { b, model: await modelNamed(b, 'mixed.gguf'), path };
  }

  it('lists tensors with layer, role, offsets and bits per weight; filters by layer, type and name; pages', async () => {
    const { b, model, path } = await mixedBackend();
    const llama = readWithLlamaGguf(path)!;
    const all = await b.api.listTensors(model.id, { limit: 500 });
    expect(all.total).toBe(llama.tensors.length);
    expect(all.tensors.map((t) => t.name)).toEqual(llama.tensors.map((t) => t.name));
    for (const [i, t] of all.tensors.entries()) {
      const ref = llama.tensors[i]!;
      expect(t.offset, t.name).toBe(llama.dataOffset + ref.offset);
      expect(t.bytes, t.name).toBe(ref.bytes);
    }
    const q = all.tensors.find((t) => t.name === 'blk.1.attn_q.weight')!;
    expect(q).toMatchObject({
      layer: 1,
      role: 'attn_q',
      shape: [256, 256],
      elements: 65536,
      type: 'Q4_K',
      bitsPerWeight: 4.5,
    });
    expect(all.tensors.find((t) => t.name === 'output_norm.weight')).toMatchObject({
      layer: null,
      role: 'output_norm',
      type: 'F32',
      bitsPerWeight: 32,
    });

    const layer2 = await b.api.listTensors(model.id, { layer: 2 });
    expect(layer2.tensors.map((t) => t.name)).toEqual(
      all.tensors.filter((t) => t.name.startsWith('blk.2.')).map((t) => t.name),
    );
    expect(layer2.total).toBe(9);
    const outside = await b.api.listTensors(model.id, { layer: 'none' });
    expect(outside.tensors.map((t) => t.name).sort()).toEqual([
      'output.weight',
      'output_norm.weight',
      'token_embd.weight',
    ]);
    const q6 = await b.api.listTensors(model.id, { type: 'q6_k' });
    expect(q6.total).toBeGreaterThan(0);
    expect(q6.tensors.every((t) => t.type === 'Q6_K')).toBe(true);
    expect(q6.total).toBe(llama.tensors.filter((t) => t.type === 14).length);
    const ffnDownQ6 = await b.api.listTensors(model.id, { type: 'Q6_K', search: 'FFN_DOWN' });
    expect(ffnDownQ6.tensors.every((t) => t.role === 'ffn_down' && t.type === 'Q6_K')).toBe(true);
    const page = await b.api.listTensors(model.id, { offset: 10, limit: 7 });
    expect(page.tensors.map((t) => t.name)).toEqual(all.tensors.slice(10, 17).map((t) => t.name));
    expect(page.total).toBe(all.total);
    await expect(b.api.listTensors(model.id, { type: 'Q9_X' })).rejects.toThrow(/no ggml type named "Q9_X"/);
    await expect(b.api.listTensors(model.id, { layer: -1 })).rejects.toThrow(/layer must be a layer number or "none"/);
  });

  it('maps each layer × role to its type, roles in data-flow order, the rest apart', async () => {
    const { b, model, path } = await mixedBackend();
    const map = await b.api.layerMap(model.id);
    expect(map.roles).toEqual([
      'attn_norm',
      'attn_q',
      'attn_k',
      'attn_v',
      'attn_output',
      'ffn_norm',
      'ffn_gate',
      'ffn_up',
      'ffn_down',
    ]);
    expect(map.layers.map((l) => l.layer)).toEqual([0, 1, 2]);
    const types = new Map(readWithLlamaGguf(path)!.tensors.map((t) => [t.name, t.type]));
    const nameOf = (id: number) => ggmlTypeById(id)!.name;
    for (const { layer, cells } of map.layers) {
      map.roles.forEach((role, i) => {
        const tensor = `blk.${layer}.${role}.weight`;
        expect(cells[i], tensor).toEqual({ tensor, type: nameOf(types.get(tensor)!), recipe: null });
      });
    }
    // Q4_K_M gives some layers' attn_v and ffn_down more bits: the map shows the mix.
    expect(new Set(map.layers.flatMap((l) => l.cells.map((c) => c?.type)))).toEqual(new Set(['F32', 'Q4_K', 'Q6_K']));
    expect(map.other.map((o) => o.name).sort()).toEqual(['output.weight', 'output_norm.weight', 'token_embd.weight']);
    // Written by the Q4_K_M recipe itself: no tensor differs from it.
    expect(map.recipeFileType).toBe('Q4_K_M');
    expect(map.other.every((o) => o.recipe === null)).toBe(true);
  });

  it('puts each bias right after its weight', async () => {
    const dir = join(tempDir(), 'models');
    mkdirSync(dir);
    await writeRandomModel(join(dir, 'qwen2.gguf'), {
      arch: 'qwen2',
      nLayer: 2,
      nEmbd: 64,
      nFf: 128,
      nHead: 4,
      nHeadKv: 2,
    });
    const b = testBackend({ modelDirs: [dir] });
    const map = await b.api.layerMap((await modelNamed(b, 'qwen2.gguf')).id);
    expect(map.roles).toEqual([
      'attn_norm',
      'attn_q',
      'attn_q.bias',
      'attn_k',
      'attn_k.bias',
      'attn_v',
      'attn_v.bias',
      'attn_output',
      'ffn_norm',
      'ffn_gate',
      'ffn_up',
      'ffn_down',
    ]);
    expect(map.layers[1]!.cells[2]).toEqual({ tensor: 'blk.1.attn_q.bias', type: 'F32', recipe: null });
    expect(
      (await b.api.listTensors((await modelNamed(b, 'qwen2.gguf')).id, { search: 'blk.0.attn_k.bias' })).tensors[0],
    ).toMatchObject({ layer: 0, role: 'attn_k.bias' });
  });
});
