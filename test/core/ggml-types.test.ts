import { describe, expect, it } from 'vitest';
import {
  GGML_TYPE_COUNT,
  GGML_TYPES,
  ggmlTypeById,
  ggmlTypeByName,
  REMOVED_GGML_TYPES,
} from '../../src-main/core/ggml-types';
import { ggml } from '../support/ggml-oracle';

describe('ggml type table', () => {
  it('matches llama.cpp for every type id it defines', () => {
    for (let id = 0; id < GGML_TYPE_COUNT; id++) {
      const ours = ggmlTypeById(id);
      if (REMOVED_GGML_TYPES.has(id)) {
        expect(ours, `id ${id}`).toBeUndefined();
        expect(ggml.blockSize(id), `removed id ${id} has no blocks in llama.cpp`).toBe(0);
        continue;
      }
      expect(ours, `id ${id} (${ggml.typeName(id)}) is missing`).toBeDefined();
      expect(ours!.name.toLowerCase(), `id ${id}`).toBe(ggml.typeName(id).toLowerCase());
      expect(ours!.blockSize, ours!.name).toBe(ggml.blockSize(id));
      expect(ours!.typeSize, ours!.name).toBe(ggml.typeSize(id));
      expect(ours!.quantized, ours!.name).toBe(ggml.isQuantized(id));
    }
  });

  it('lists every type the issue names, each once', () => {
    const names = GGML_TYPES.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of [
      'F32',
      'F16',
      'BF16',
      'F64',
      'I8',
      'I16',
      'I32',
      'I64',
      'Q4_0',
      'Q8_1',
      'Q2_K',
      'Q8_K',
      'IQ1_S',
      'IQ1_M',
      'IQ2_XXS',
      'IQ2_XS',
      'IQ2_S',
      'IQ3_XXS',
      'IQ3_S',
      'IQ4_NL',
      'IQ4_XS',
      'TQ1_0',
      'TQ2_0',
      'MXFP4',
      'NVFP4',
      'Q1_0',
      'Q2_0',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('looks names up case-insensitively', () => {
    expect(ggmlTypeByName('q4_k')?.id).toBe(12);
    expect(ggmlTypeByName('iq2_xxs')?.id).toBe(16);
    expect(ggmlTypeByName('Q9_9')).toBeUndefined();
  });
});
