// shader-source.ts's #unroll, on shader files of its own: shader-source reads GUFO_SHADERS on first use.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shaderSource } from '../../../src-main/engine/gpu/shader-source';

const FILES: Record<string, string> = {
  'matmul.wgsl': '',
  'nested.wgsl': [
    '#unroll D 0 {{DIM}} 4',
    '#unroll G 0 2 1',
    'acc[{{G}}][{{D}}] += x[{{D}}];',
    '#endunroll',
    '#endunroll',
    'done();',
  ].join('\n'),
  'guarded.wgsl': ['#if WIDE', '#unroll D 0 {{DIM}} 8', 'a[{{D}}];', '#endunroll', '#endif', 'b();'].join('\n'),
  'open.wgsl': ['#unroll D 0 4 1', 'a[{{D}}];'].join('\n'),
  'badstep.wgsl': ['#unroll D 0 4 0', 'a[{{D}}];', '#endunroll'].join('\n'),
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gufo-unroll-'));
  for (const [name, text] of Object.entries(FILES)) writeFileSync(join(dir, name), text);
  process.env.GUFO_SHADERS = dir;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('#unroll', () => {
  it('writes its lines out once per value, nested blocks inside out, bounds from defines', () => {
    expect(shaderSource('nested.wgsl', { DIM: 8 }).split('\n')).toEqual([
      'acc[0][0] += x[0];',
      'acc[1][0] += x[0];',
      'acc[0][4] += x[4];',
      'acc[1][4] += x[4];',
      'done();',
    ]);
  });

  it('is dropped with its #if, needing no define there', () => {
    expect(shaderSource('guarded.wgsl', {})).toBe('b();');
    expect(shaderSource('guarded.wgsl', { WIDE: 1, DIM: 16 })).toBe('a[0];\na[8];\nb();');
  });

  it('names a block left open and bounds that are not FROM TO STEP, in the folder they were read from', () => {
    expect(() => shaderSource('open.wgsl')).toThrow(`${join(dir, 'open.wgsl')}: #unroll D without #endunroll`);
    expect(() => shaderSource('badstep.wgsl')).toThrow(`${join(dir, 'badstep.wgsl')}: #unroll D needs FROM TO STEP`);
    expect(() => shaderSource('nested.wgsl')).toThrow(/no value for \{\{DIM\}\}/);
  });
});
