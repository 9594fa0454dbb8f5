import { describe, expect, it } from 'vitest';
import { architectureTraits, unsupportedArchitectureMessage } from '../../src-main/core/architectures';
import {
  blockName,
  blockTensorSuffix,
  tensorLayer,
  tensorLocation,
  tensorName,
} from '../../src-main/core/tensor-names';

describe('tensor names', () => {
  it('spells a role as llama.cpp does, with its layer and kind', () => {
    expect(tensorName('attn_q', 3)).toBe('blk.3.attn_q.weight');
    expect(tensorName('attn_output', 0, 'bias')).toBe('blk.0.attn_output.bias');
    expect(tensorName('output_norm')).toBe('output_norm.weight');
    expect(blockName(7)).toBe('blk.7');
    expect(blockTensorSuffix('ffn_gate_inp')).toBe('ffn_gate_inp.weight');
  });

  it('refuses a block role without a layer and a model role with one', () => {
    expect(() => (tensorName as (role: string, layer?: number) => string)('attn_q')).toThrow(
      'tensor role attn_q: needs layer',
    );
    expect(() => (tensorName as (role: string, layer?: number) => string)('output', 1)).toThrow(
      'tensor role output: takes no layer',
    );
  });

  it('reads the layer and role back from a name', () => {
    expect(tensorLayer(tensorName('ffn_down_exps', 12))).toBe(12);
    expect(tensorLayer(tensorName('token_embd'))).toBeUndefined();
    expect(tensorLocation(tensorName('attn_k', 2, 'bias'))).toEqual({ layer: 2, role: 'attn_k.bias' });
  });
});

describe('architectures', () => {
  it('answers only for the architectures the engine runs, inherited keys included', () => {
    expect(architectureTraits('gemma2')?.attnSoftcap).toBe(50);
    expect(architectureTraits('constructor')).toBeUndefined();
    expect(architectureTraits(null)).toBeUndefined();
    expect(unsupportedArchitectureMessage('falcon')).toBe(
      'architecture "falcon" is not supported; supported: llama, qwen2, qwen3, qwen2moe, qwen3moe, gemma2, gemma3, phi3, gpt-oss, bert, nomic-bert',
    );
  });
});
