import { describe, expect, it } from 'vitest';
import { ggmlTypeByName, type GgmlTypeName } from '../../../src-main/core/ggml-types';
import { decoderFor } from '../../../src-main/core/quants/decoders';
import { encoderFor } from '../../../src-main/core/quants/encoders';
import {
  IQ1S_GRID,
  IQ2S_GRID,
  IQ2XS_GRID,
  IQ2XXS_GRID,
  IQ3S_GRID,
  IQ3XXS_GRID,
} from '../../../src-main/core/quants/iq-tables';

// Each test file gets its own module instances: nothing else here has used a grid before.
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
