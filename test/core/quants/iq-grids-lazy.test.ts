import { describe, expect, it, vi } from 'vitest';
import type { GgmlTypeName } from '../../../src-main/core/ggml-types';

// Fresh instances of the codec modules (the run may share a process and its modules between
// files: vitest.config.ts), so no grid has been used before this file's tests.
vi.resetModules();
const { ggmlTypeByName } = await import('../../../src-main/core/ggml-types');
const { decoderFor } = await import('../../../src-main/core/quants/decoders');
const { encoderFor } = await import('../../../src-main/core/quants/encoders');
const { IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID } =
  await import('../../../src-main/core/quants/iq-tables');

const GRIDS = { IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID };
const built = () =>
  Object.entries(GRIDS)
    .filter(([, g]) => g.built)
    .map(([name]) => name);

function roundTrip(name: GgmlTypeName): void {
  const type = ggmlTypeByName(name)!;
  const values = Float32Array.from({ length: 256 }, (_, i) => Math.sin(i));
  const blocks = 256 / type.blockSize;
  const bytes = new Uint8Array(blocks * type.typeSize);
  encoderFor(type)(values, bytes, 1, 256, new Float32Array(256).fill(1));
  decoderFor(type)(bytes, new Float32Array(256), blocks);
}

describe('IQ grids are unpacked on first use', () => {
  it('loading the codecs and converting to non-IQ types unpacks none', () => {
    expect(built()).toEqual([]);
    for (const name of ['Q4_K', 'Q6_K', 'Q8_0', 'IQ4_XS'] as const) roundTrip(name);
    expect(built()).toEqual([]);
  });

  it('an IQ type unpacks its own grid only', () => {
    roundTrip('IQ3_S');
    expect(built()).toEqual(['IQ3S_GRID']);
    decoderFor(ggmlTypeByName('IQ1_M')!)(new Uint8Array(ggmlTypeByName('IQ1_M')!.typeSize), new Float32Array(256), 1);
    expect(built()).toEqual(['IQ1S_GRID', 'IQ3S_GRID']);
  });
});
