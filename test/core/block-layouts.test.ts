/**
 * One declared block layout per ggml type (ggml-types.ts), and no second copy that can drift:
 * the layout itself against llama.cpp's type traits, then each reader of it (the CPU decoders,
 * the inspector's block fields) checked to read its scale fields exactly where it is declared.
 */
import koffi from 'koffi';
import { describe, expect, it } from 'vitest';
import { GGML_TYPES, type GgmlType } from '../../src-main/core/ggml-types';
import { blockFields } from '../../src-main/core/quants/block-fields';
import { decoderFor, hasDecoder } from '../../src-main/core/quants/decoders';
import { f16ToF32 } from '../../src-main/core/quants/half';
import { ggml } from '../support/ggml-oracle';
import { randomBlocks, type ScaleField } from '../support/decoder-check';
import { mulberry32 } from '../support/random';

/** The head of ggml's struct ggml_type_traits (ggml.h). */
const TypeTraits = koffi.struct('gufo_ggml_type_traits_head', {
  type_name: 'const char *',
  blck_size: 'int64_t',
  blck_size_interleave: 'int64_t',
  type_size: 'size_t',
  is_quantized: 'bool',
});

function traits(id: number): { type_name: string; blck_size: number; type_size: number; is_quantized: boolean } {
  const ptr = ggml.fn('const void *ggml_get_type_traits(int type)')(id);
  const t = koffi.decode(ptr, TypeTraits) as {
    type_name: string;
    blck_size: number | bigint;
    type_size: number | bigint;
    is_quantized: boolean;
  };
  return { ...t, blck_size: Number(t.blck_size), type_size: Number(t.type_size) };
}

/** The float scale fields a decoder multiplies every value by (zero them and every value is zero). */
const floatScales = (t: GgmlType) => t.layout.filter((f) => f.kind === 'f16' || f.kind === 'f32' || f.kind === 'ue4m3');
const asScaleFields = (t: GgmlType): ScaleField[] =>
  floatScales(t).flatMap((f) =>
    f.kind === 'ue4m3' ? [] : [{ at: f.offset, kind: f.kind === 'f32' ? 'f32' : 'f16' } as const],
  );

describe('block layouts', () => {
  it("every type has one, whose fields tile its block exactly and match llama.cpp's block size and bytes", () => {
    for (const t of GGML_TYPES) {
      const ours = traits(t.id);
      expect(ours.type_name.toUpperCase(), `id ${t.id}`).toBe(t.name);
      expect(t.blockSize, t.name).toBe(ours.blck_size);
      let next = 0;
      for (const f of t.layout) {
        expect(f.offset, `${t.name}.${f.name} starts where the field before ends (no gap, no overlap)`).toBe(next);
        expect(f.bytes, `${t.name}.${f.name}`).toBeGreaterThan(0);
        next = f.offset + f.bytes;
      }
      expect(next, `${t.name}: its fields cover its ${ours.type_size} bytes`).toBe(ours.type_size);
      expect(t.typeSize, t.name).toBe(ours.type_size);
      expect(new Set(t.layout.map((f) => f.name)).size, `${t.name}: field names are unique`).toBe(t.layout.length);
    }
  });

  it("the CPU decoders read each type's float scales where its layout declares them", () => {
    const rng = mulberry32(41);
    const checked: string[] = [];
    for (const t of GGML_TYPES) {
      const scales = floatScales(t);
      if (!t.quantized || !hasDecoder(t) || scales.length === 0) continue;
      const blocks = 8;
      const bytes = randomBlocks(rng, t.name, blocks, asScaleFields(t));
      for (let b = 0; b < blocks; b++) {
        for (const f of scales) bytes.fill(0, b * t.typeSize + f.offset, b * t.typeSize + f.offset + f.bytes);
      }
      const out = new Float32Array(blocks * t.blockSize);
      decoderFor(t)(bytes, out, blocks);
      // A decoder reading a scale anywhere else would pick up random bytes there.
      expect(
        out.every((v) => v === 0),
        `${t.name}: all values are 0 once ${scales.map((f) => f.name).join(', ')} are 0`,
      ).toBe(true);
      checked.push(t.name);
    }
    expect(checked.length).toBeGreaterThanOrEqual(24);
  });

  it('the inspector shows each f16 scale from the bytes its layout declares', () => {
    const rng = mulberry32(42);
    for (const t of GGML_TYPES) {
      if (!t.quantized) continue;
      const bytes = randomBlocks(rng, t.name, 1, asScaleFields(t));
      const shown = blockFields(t, bytes).fields;
      for (const f of t.layout.filter((x) => x.kind === 'f16')) {
        const field = shown.find((x) => x.name === f.name);
        if (!field) continue; // Q8_1 has no inspector fields
        expect(field.values, `${t.name}.${f.name}`).toEqual([f16ToF32(bytes[f.offset]! | (bytes[f.offset + 1]! << 8))]);
      }
    }
  });
});
