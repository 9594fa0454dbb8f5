import { describe, expect, it } from 'vitest';
import { shaderSource } from '../../../src-main/engine/gpu/shader-source';
import { GPU_TYPE_NAMES } from './fixtures';

describe('shaderSource', () => {
  it('expands includes once, substitutes defines and keeps #if branches', () => {
    const withSubgroups = shaderSource('matmul.wgsl', { TYPE: 'q4_k', WG: 64, ROWS: 2, TT: 1, SUBGROUPS: true });
    expect(withSubgroups).toMatch(/^enable subgroups;/m);
    expect(withSubgroups).toContain('const WG: u32 = 64u;');
    expect(withSubgroups).toContain('fn kscale_min(');
    expect(withSubgroups.match(/^struct Params/gm)).toHaveLength(1);
    expect(withSubgroups).not.toMatch(/\{\{|^\s*#/m);
    const without = shaderSource('matmul.wgsl', { TYPE: 'q4_k', WG: 64, ROWS: 2, TT: 1, SUBGROUPS: false });
    expect(without).not.toMatch(/enable subgroups|subgroupAdd|subgroup_id/);
  });

  it('has a block decoder for every GPU type', () => {
    for (const type of GPU_TYPE_NAMES) {
      expect(shaderSource('embedding.wgsl', { TYPE: type.toLowerCase(), WG: 64 })).toContain('fn decode_unit(');
    }
  });

  it('names what is missing', () => {
    expect(() => shaderSource('matmul.wgsl', { TYPE: 'q4_k' })).toThrow(/no value for \{\{WG\}\}/);
    expect(() => shaderSource('embedding.wgsl', { TYPE: 'q9_z', WG: 64 })).toThrow(/quant\/q9_z\.wgsl/);
  });
});
