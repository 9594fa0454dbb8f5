/**
 * The WGSL block decoders read word offsets generated from the type table's block layouts
 * (gpuBlockDefines), never numbers of their own, and those offsets put every GPU type's block
 * back together: main plane words plus the scale plane's field make the file's block.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GGML_TYPES, ggmlTypeByName } from '../../../src-main/core/ggml-types';
import { shaderSource, shadersDir } from '../../../src-main/engine/gpu/shader-source';
import { REPACK, gpuBlockDefines, supportsGpuType } from '../../../src-main/engine/gpu/weights';

describe('GPU block layouts', () => {
  it('main plane words and the moved scale field make up each block', () => {
    for (const type of GGML_TYPES.filter((t) => t.quantized && supportsGpuType(t))) {
      const defines = gpuBlockDefines(type);
      const moved = REPACK[type.name];
      expect(4 * defines.BLOCK_WORDS! + (moved?.scaleBytes ?? 0), type.name).toBe(type.typeSize);
      if (moved) {
        const field = type.layout.find((f) => f.offset === moved.scaleAt);
        expect(field && field.bytes, `${type.name}: the scale plane takes a whole field`).toBe(moved.scaleBytes);
      }
    }
  });

  it('puts the fields where ggml-common.h has them', () => {
    expect(gpuBlockDefines(ggmlTypeByName('Q6_K')!)).toEqual({ W_QL: 0, W_QH: 32, W_SCALES: 48, BLOCK_WORDS: 52 });
    expect(gpuBlockDefines(ggmlTypeByName('Q3_K')!)).toEqual({ W_HMASK: 0, W_QS: 8, W_SCALES: 24, BLOCK_WORDS: 27 });
    expect(gpuBlockDefines(ggmlTypeByName('Q5_K')!)).toEqual({
      W_D: 0,
      W_SCALES: 1,
      W_QH: 4,
      W_QS: 12,
      BLOCK_WORDS: 44,
    });
    expect(gpuBlockDefines(ggmlTypeByName('IQ4_XS')!)).toEqual({ W_D: 0, W_SCALES_L: 1, W_QS: 2, BLOCK_WORDS: 34 });
  });

  it('the WGSL decoders take block strides and field words from the generated defines', () => {
    const dir = join(shadersDir(), 'quant');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.wgsl'))) {
      const code = readFileSync(join(dir, file), 'utf8').replace(/\/\/.*$/gm, '');
      expect(code, `${file}: a literal block stride`).not.toMatch(/\b\d+u \* (blk|\(row)/);
      expect(code, `${file}: a literal field word`).not.toMatch(/\bb \+ \d+u\b|W\[b\]/);
    }
    for (const type of GGML_TYPES.filter(supportsGpuType)) {
      const source = shaderSource('embedding.wgsl', { TYPE: type.name.toLowerCase(), WG: 64 });
      expect(source, type.name).not.toContain('{{');
    }
  });
});
