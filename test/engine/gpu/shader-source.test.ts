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
    expect(withSubgroups.match(/^struct WeightUniform /gm)).toHaveLength(1);
    expect(withSubgroups).not.toMatch(/\{\{|^\s*#/m);
    const without = shaderSource('matmul.wgsl', { TYPE: 'q4_k', WG: 64, ROWS: 2, TT: 1, SUBGROUPS: false });
    expect(without).not.toMatch(/enable subgroups|subgroupAdd|subgroup_id/);
  });

  it('has a block decoder for every GPU type', () => {
    for (const type of GPU_TYPE_NAMES) {
      expect(shaderSource('embedding.wgsl', { TYPE: type.toLowerCase(), WG: 64 })).toContain('fn decode_unit(');
    }
  });

  it('reads a folder a caller names beside shaders/, each with its own files, in one process', () => {
    const variant = mkdtempSync(join(tmpdir(), 'gufo-variant-'));
    try {
      // A variant of one kernel: its own copy of a file the shipped one also includes.
      writeFileSync(join(variant, 'copy.wgsl'), '#include "step.wgsl"\nconst VARIANT: u32 = {{WG}}u;\n');
      writeFileSync(join(variant, 'step.wgsl'), '// the variant step');
      const shipped = shaderSource('copy.wgsl', { WG: 64 });
      expect(shaderSource('copy.wgsl', { WG: 64 }, variant)).toBe('// the variant step\nconst VARIANT: u32 = 64u;\n');
      expect(shaderSource('copy.wgsl', { WG: 64 })).toBe(shipped);
      expect(shipped).not.toContain('VARIANT');
      // A file the variant lacks, and a directive error in one it has, are named with its folder.
      expect(() => shaderSource('matmul.wgsl', {}, variant)).toThrow(
        `WGSL include not found: ${join(variant, 'matmul.wgsl')}`,
      );
      expect(() => shaderSource('copy.wgsl', {}, variant)).toThrow(
        `${join(variant, 'copy.wgsl')}: no value for {{WG}}`,
      );
    } finally {
      rmSync(variant, { recursive: true, force: true });
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
    expect(findShadersDir(source, {})).toBe(join(import.meta.dirname, '../../../shaders/'));
  });

  it("finds out/shaders from a build: the app's engine (out/main/engine.js) and the CLI (out/cli/)", () => {
    const root = mkdtempSync(join(tmpdir(), 'gufo-shaders-'));
    try {
      mkdirSync(join(root, 'out/shaders'), { recursive: true });
      writeFileSync(join(root, 'out/shaders/matmul.wgsl'), '');
      for (const built of ['out/main/engine.js', 'out/cli/engine.js', 'out/cli/chunk-ABC.js']) {
        expect(findShadersDir(pathToFileURL(join(root, built)).href, {}), built).toBe(join(root, 'out/shaders/'));
      }
      // GUFO_SHADERS comes first.
      const moduleUrl = pathToFileURL(join(root, 'out/cli/engine.js')).href;
      expect(findShadersDir(moduleUrl, { GUFO_SHADERS: join(import.meta.dirname, '../../../shaders') })).toBe(
        join(import.meta.dirname, '../../../shaders'),
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('looks in one place only, and says which and how to fix it', () => {
    const root = mkdtempSync(join(tmpdir(), 'gufo-shaders-'));
    const cwd = process.cwd();
    try {
      // A shaders/ folder elsewhere (here: the current directory) is no stand-in for the build's.
      mkdirSync(join(root, 'shaders'), { recursive: true });
      writeFileSync(join(root, 'shaders/matmul.wgsl'), '');
      process.chdir(root);
      const moduleUrl = pathToFileURL(join(root, 'out/cli/engine.js')).href;
      expect(() => findShadersDir(moduleUrl, {})).toThrow(
        `WGSL shaders not found: ${join(root, 'out/shaders/')} holds no matmul.wgsl (rebuild with npm run build, or set GUFO_SHADERS)`,
      );
      expect(() => findShadersDir(moduleUrl, { GUFO_SHADERS: join(root, 'nowhere') })).toThrow(
        /nowhere holds no matmul\.wgsl \(check GUFO_SHADERS\)/,
      );
    } finally {
      process.chdir(cwd);
      rmSync(root, { recursive: true, force: true });
    }
  });
});
