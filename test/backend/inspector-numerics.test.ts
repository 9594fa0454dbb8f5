/**
 * The inspector's numbers against llama.cpp: block values equal its dequantize_row_* of the same
 * bytes, histograms add up, and the re-quantization error equals llama.cpp's own quantize +
 * dequantize round trip on the same rows.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobState, RequantError } from '../../src-preload/api';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { testBackend } from '../support/backend';
import { llamaDequantize, llamaQuantize } from '../support/ggml-oracle';
import { tempDir } from '../support/temp';
import { modelNamed, writeTensorZoo, ZOO_TYPES, type ZooTensor } from './inspector-fixtures';

async function zooBackend() {
  const dir = join(tempDir(), 'models');
  mkdirSync(dir);
  const zoo = await writeTensorZoo(dir);
  const b = testBackend({ modelDirs: [dir] });
  const model = await modelNamed(b, 'zoo.gguf');
  const tensor = (name: string): ZooTensor => zoo.tensors.find((t) => t.name === name)!;
  return { b, id: model.id, tensor };
}

/** llama.cpp's values of `bytes` (whole blocks of `t`'s type); F32 has no decoder there: its bytes are the values. */
function llamaValues(t: ZooTensor, bytes: Uint8Array): Float32Array {
  const n = (bytes.length / t.type.typeSize) * t.type.blockSize;
  return t.type.name === 'F32' ? new Float32Array(bytes.slice().buffer) : llamaDequantize(t.type.id, bytes.slice(), n);
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (x) => x.toString(16).padStart(2, '0')).join(' ');

describe('tensorBlock', () => {
  it("decodes a block to llama.cpp's values, with its bytes, fields and place, for every type", async () => {
    const { b, id, tensor } = await zooBackend();
    for (const typeName of ZOO_TYPES) {
      const t = tensor(`zoo.${typeName.toLowerCase()}`);
      const unit = t.type.blockSize === 1 ? 32 : t.type.blockSize;
      const blockCount = 2048 / unit;
      for (const block of [0, 1, blockCount - 1]) {
        const view = await b.api.tensorBlock(id, t.name, block);
        const start = ((block * unit) / t.type.blockSize) * t.type.typeSize;
        const bytes = t.bytes.subarray(start, start + (unit / t.type.blockSize) * t.type.typeSize);
        // Values come as the shortest decimals that read back as the same f32: compare as f32.
        expect(
          view.values.map((v) => Math.fround(v as number)),
          `${t.name} block ${block}`,
        ).toEqual(Array.from(llamaValues(t, bytes)));
        expect(view).toMatchObject({
          type: typeName,
          block,
          blockCount,
          blockSize: unit,
          firstElement: block * unit,
          row: Math.floor((block * unit) / 512),
          bytes: bytes.length,
        });
        expect(view.hex).toBe(hex(bytes));
        expect(view.complete, typeName).toBe(typeName !== 'IQ2_XXS');
        if (typeName !== 'IQ2_XXS') expect(view.codes, typeName).toHaveLength(unit);
        expect(view.formula).toMatch(/value/);
      }
    }
  });

  it('shows d, dmin, scales and mins of a Q4_K block as its bytes hold them', async () => {
    const { b, id, tensor } = await zooBackend();
    const bytes = tensor('zoo.q4_k').bytes.subarray(144, 288);
    const view = await b.api.tensorBlock(id, 'zoo.q4_k', 1);
    const f16 = (o: number) => llamaDequantize(1, bytes.slice(o, o + 2), 1)[0];
    expect(view.fields.map((f) => [f.name, f.span])).toEqual([
      ['d', 256],
      ['dmin', 256],
      ['scales', 32],
      ['mins', 32],
    ]);
    expect(view.fields[0]!.values.map((v) => Math.fround(v as number))).toEqual([f16(0)]);
    expect(view.fields[1]!.values.map((v) => Math.fround(v as number))).toEqual([f16(2)]);
    // Sub-blocks 0..3 keep their 6-bit scale and min in the low bits of bytes 4..7 and 8..11.
    expect(view.fields[2]!.values.slice(0, 4)).toEqual(Array.from(bytes.subarray(4, 8), (x) => x & 63));
    expect(view.fields[3]!.values.slice(0, 4)).toEqual(Array.from(bytes.subarray(8, 12), (x) => x & 63));
  });

  it('refuses a block outside the tensor, naming the file, tensor and range', async () => {
    const { b, id } = await zooBackend();
    await expect(b.api.tensorBlock(id, 'zoo.q4_k', 8)).rejects.toThrow(
      /zoo\.gguf: tensor "zoo\.q4_k" has blocks 0 to 7, not 8/,
    );
    await expect(b.api.tensorBlock(id, 'zoo.q4_k', -1)).rejects.toThrow(/has blocks 0 to 7, not -1/);
    await expect(b.api.tensorBlock(id, 'zoo.q4_k', 0.5)).rejects.toThrow(/has blocks 0 to 7, not 0.5/);
  });

  it('sends NaN and infinities as strings (JSON has no such numbers)', async () => {
    const { b, id } = await zooBackend();
    const view = await b.api.tensorBlock(id, 'zoo.special', 0);
    expect(view.values.slice(0, 3)).toEqual([expect.any(Number), 'NaN', 'Infinity']);
    expect((await b.api.tensorBlock(id, 'zoo.special', 1)).values[8]).toBe('-Infinity');
    expect(JSON.parse(JSON.stringify(view))).toEqual(view);
    // Finite values read as short decimals (≤ 9 significant digits), not as 17-digit doubles.
    const digits = (v: number) => v.toExponential().replace(/^-|e.*$|\./g, '').length;
    expect(view.values.filter((v): v is number => typeof v === 'number').every((v) => digits(v) <= 9)).toBe(true);
  });
});

describe('tensorHistogram', () => {
  it('bins every value of a small tensor: statistics and counts as computed from llama.cpp’s values', async () => {
    const { b, id, tensor } = await zooBackend();
    const t = tensor('zoo.q4_k');
    const values = Array.from(llamaValues(t, t.bytes));
    const h = await b.api.tensorHistogram(id, 'zoo.q4_k', 20);
    const min = Math.min(...values);
    const max = Math.max(...values);
    const mean = values.reduce((a, v) => a + v, 0) / values.length;
    expect(h).toMatchObject({
      tensor: 'zoo.q4_k',
      sampled: 2048,
      elements: 2048,
      rowsSampled: 4,
      rows: 4,
      nonFinite: 0,
      min,
      max,
    });
    expect(h.mean).toBeCloseTo(mean, 12);
    expect(h.std).toBeCloseTo(Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length), 12);
    const width = (max - min) / 20;
    const counts = new Array<number>(20).fill(0);
    for (const v of values) counts[Math.min(19, Math.floor((v - min) / width))]!++;
    expect(h.counts).toEqual(counts);
    expect(h.counts.reduce((a, c) => a + c, 0)).toBe(h.sampled);
  });

  it('samples evenly spread whole rows of a big tensor, bounded, with the statistics of the whole', async () => {
    const { b, id } = await zooBackend();
    const h = await b.api.tensorHistogram(id, 'zoo.big', 64);
    expect(h.elements).toBe(1024 * 1100);
    expect(h.rows).toBe(1100);
    expect(h.rowsSampled).toBe(1024);
    expect(h.sampled).toBe(1024 * 1024);
    expect(h.counts.reduce((a, c) => a + c, 0)).toBe(h.sampled);
    expect(Math.abs(h.mean)).toBeLessThan(2e-4);
    expect(h.std).toBeGreaterThan(0.0196);
    expect(h.std).toBeLessThan(0.0204);
  });

  it('leaves NaN and infinities out of the bins and says how many', async () => {
    const { b, id } = await zooBackend();
    const h = await b.api.tensorHistogram(id, 'zoo.special', 8);
    expect(h.nonFinite).toBe(3);
    expect(h.counts.reduce((a, c) => a + c, 0)).toBe(h.sampled - 3);
    expect(Number.isFinite(h.min) && Number.isFinite(h.max) && Number.isFinite(h.std)).toBe(true);
    await expect(b.api.tensorHistogram(id, 'zoo.special', 0)).rejects.toThrow(
      /bins must be a whole number from 1 to 1000/,
    );
  });
});

/** RMSE and max |error| of llama.cpp's own round trip through `typeName`, as the test computes them. */
function llamaRoundTrip(typeName: string, source: Float32Array, rowLength: number): { rmse: number; maxError: number } {
  const type = ggmlTypeByName(typeName)!;
  const back = llamaDequantize(
    type.id,
    llamaQuantize(type.id, source, source.length / rowLength, rowLength),
    source.length,
  );
  let squares = 0;
  let maxError = 0;
  for (let i = 0; i < source.length; i++) {
    const e = Math.abs(back[i]! - source[i]!);
    squares += e * e;
    maxError = Math.max(maxError, e);
  }
  return { rmse: Math.sqrt(squares / source.length), maxError };
}

async function runRequant(
  b: ReturnType<typeof testBackend>,
  id: number,
  tensor: string,
): Promise<{ job: JobState; result: RequantError }> {
  const jobId = await b.api.startRequantError(id, tensor);
  const job = await b.context.jobs.wait(jobId);
  expect(job.status, job.error ?? '').toBe('done');
  return { job, result: job.result as RequantError };
}

describe('re-quantization error (a job)', () => {
  it("equals llama.cpp's quantize + dequantize error on the same rows, for an F32 and a Q4_K source", async () => {
    const { b, id, tensor } = await zooBackend();
    for (const name of ['zoo.f32', 'zoo.q4_k']) {
      const t = tensor(name);
      const source = llamaValues(t, t.bytes);
      const { job, result } = await runRequant(b, id, name);
      expect(result).toMatchObject({
        tensor: name,
        sourceType: t.type.name,
        elements: 2048,
        rowsSampled: 4,
        rowCount: 4,
      });
      expect(job).toMatchObject({
        kind: 'requant-error',
        modelId: id,
        unit: 'steps',
        done: result.rows.length,
        total: result.rows.length,
      });
      const byType = new Map(result.rows.map((r) => [r.type, r]));
      for (const typeName of ['Q8_0', 'Q5_1', 'Q4_0', 'Q6_K', 'Q4_K', 'Q2_K', 'IQ4_NL', 'IQ4_XS']) {
        const expected = llamaRoundTrip(typeName, source, 512);
        expect(byType.get(typeName), `${name} → ${typeName}`).toMatchObject({
          ...expected,
          note: null,
          bitsPerWeight: expect.any(Number) as number,
        });
      }
      expect(byType.get('Q8_0')!.rmse!).toBeLessThan(byType.get('Q4_0')!.rmse!);
      const bpw = result.rows.map((r) => r.bitsPerWeight);
      expect(bpw).toEqual([...bpw].sort((x, y) => y - x));
      expect(result.rows.map((r) => r.type)).not.toContain('F32');
    }
    // Progress was reported as the job went.
    const updates = b.seen.flatMap((e) => (e.type === 'job' && e.job.kind === 'requant-error' ? [e.job] : []));
    expect(updates.some((j) => j.status === 'running' && j.total !== null)).toBe(true);
  });

  it('says which types do not fit rows that are not whole blocks', async () => {
    const { b, id } = await zooBackend();
    const { result } = await runRequant(b, id, 'zoo.odd');
    const byType = new Map(result.rows.map((r) => [r.type, r]));
    expect(byType.get('Q4_K')).toMatchObject({
      rmse: null,
      maxError: null,
      note: 'rows of 96 values are not whole Q4_K blocks of 256',
    });
    expect(byType.get('Q8_0')!.rmse).toBeGreaterThan(0);
  });

  it('can be cancelled', async () => {
    const { b, id } = await zooBackend();
    const jobId = await b.api.startRequantError(id, 'zoo.big');
    await b.api.cancelJob(jobId);
    expect((await b.context.jobs.wait(jobId)).status).toBe('cancelled');
  });
});
