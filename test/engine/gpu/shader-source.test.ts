import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findShadersDir, shaderSource } from '../../../src-main/engine/gpu/shader-source';
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

describe('findShadersDir', () => {
  it('finds the repository shaders from the sources', () => {
    const source = pathToFileURL(join(import.meta.dirname, '../../../src-main/engine/gpu/shader-source.ts')).href;
    expect(findShadersDir(source, {}, tmpdir())).toBe(join(import.meta.dirname, '../../../shaders/'));
  });

  it('finds out/shaders from the built engine, out/main/engine.js', () => {
    const root = mkdtempSync(join(tmpdir(), 'gufo-shaders-'));
    try {
      mkdirSync(join(root, 'out/main'), { recursive: true });
      mkdirSync(join(root, 'out/shaders'));
      writeFileSync(join(root, 'out/shaders/matmul.wgsl'), '');
      const moduleUrl = pathToFileURL(join(root, 'out/main/engine.js')).href;
      expect(findShadersDir(moduleUrl, {}, join(root, 'elsewhere'))).toBe(join(root, 'out/shaders/'));
      // GUFO_SHADERS comes first; the current directory's shaders/ last.
      expect(findShadersDir(moduleUrl, { GUFO_SHADERS: join(import.meta.dirname, '../../../shaders') }, root)).toBe(
        join(import.meta.dirname, '../../../shaders'),
      );
      rmSync(join(root, 'out/shaders'), { recursive: true });
      expect(() => findShadersDir(moduleUrl, {}, join(root, 'elsewhere'))).toThrow(/WGSL shaders not found.*GUFO_SHADERS/);
      expect(findShadersDir(moduleUrl, {}, import.meta.dirname + '/../../..')).toBe(join(import.meta.dirname, '../../../shaders'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
