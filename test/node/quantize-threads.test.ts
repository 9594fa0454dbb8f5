import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { llamaFileTypeId } from '../../src-main/core/llama-file-types';
import type { QuantFileType } from '../../src-main/core/quant-recipes';
import { AHEAD_PER_THREAD, quantizeFile, type QuantizeProgress } from '../../src-main/node/quantize';
import { quantizeChunk } from '../../src-main/node/quantize-worker/chunk';
import { ChunkPool } from '../../src-main/node/quantize-worker/pool';
import { gufo } from '../support/cli';
import { llamaModelQuantize } from '../support/llama-quantize';
import { mulberry32 } from '../support/random';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';

const same = (a: string, b: string) => Buffer.compare(readFileSync(a), readFileSync(b)) === 0;

describe('quantizing on several threads', () => {
  it("writes the same bytes and reports the same error on 1 and 3 threads, and llama.cpp's bytes", async () => {
    const dir = tempDir();
    const random = join(dir, 'random.gguf');
    // Several ggml types per file (Q4_K_M mixes Q4_K, Q6_K...), tensors larger than one chunk.
    await writeRandomModel(random, { nLayer: 1, nEmbd: 512, nFf: 1024, nHead: 8, nHeadKv: 2 });
    const cases: [string, QuantFileType][] = [
      [STORIES_260K, 'Q4_K_M'],
      [random, 'Q4_K_M'],
      [random, 'IQ4_XS'],
      [random, 'Q8_0'],
    ];
    for (const [input, type] of cases) {
      const one = join(dir, `one-${type}.gguf`);
      const three = join(dir, `three-${type}.gguf`);
      const a = await quantizeFile(input, one, type, { threads: 1, overwrite: true });
      const b = await quantizeFile(input, three, type, { threads: 3, overwrite: true });
      expect(same(one, three), `${input} ${type}`).toBe(true);
      expect(b.tensors).toEqual(a.tensors);
      if (input === random) {
        const theirs = join(dir, `llama-${type}.gguf`);
        expect(llamaModelQuantize(input, theirs, llamaFileTypeId(type)!).ok).toBe(true);
        // The whole file, header included.
        expect(same(three, theirs), `llama.cpp ${type}`).toBe(true);
      }
    }
  }, 120_000);

  it('reports progress up to the whole model and stops when cancelled, leaving no file', async () => {
    const dir = tempDir();
    const input = join(dir, 'model.gguf');
    await writeRandomModel(input, { nLayer: 1, nEmbd: 512, nFf: 1024, nHead: 8, nHeadKv: 2 });
    const seen: QuantizeProgress[] = [];
    await quantizeFile(input, join(dir, 'full.gguf'), 'Q4_K_M', { threads: 2, onProgress: (p) => seen.push({ ...p }) });
    expect(seen.map((p) => p.elementsDone)).toEqual([...seen.map((p) => p.elementsDone)].sort((x, y) => x - y));
    expect(seen.at(-1)!.elementsDone).toBe(seen.at(-1)!.elementsTotal);

    const controller = new AbortController();
    let calls = 0;
    const run = quantizeFile(input, join(dir, 'cancelled.gguf'), 'Q4_K_M', {
      threads: 2,
      signal: controller.signal,
      onProgress: () => ++calls === 3 && controller.abort(),
    });
    await expect(run).rejects.toThrow(/abort/i);
    expect(readdirSync(dir).sort()).toEqual(['full.gguf', 'model.gguf']);
  }, 60_000);

  it('this thread takes a share when asked: threads 1 starts no worker, threads N with thisThreadEncodes N − 1; same bytes', async () => {
    const dir = tempDir();
    const input = join(dir, 'model.gguf');
    await writeRandomModel(input, { nLayer: 1, nEmbd: 512, nFf: 1024, nHead: 8, nHeadKv: 2 });
    let workers = 0;
    const counted = () => workers++;
    process.on('worker', counted);
    const started: number[] = [];
    try {
      for (const [threads, thisThreadEncodes] of [
        [1, false],
        [2, true],
        [3, true],
        [2, false],
      ] as const) {
        workers = 0;
        await quantizeFile(input, join(dir, `${threads}-${thisThreadEncodes}.gguf`), 'Q4_K_M', {
          threads,
          thisThreadEncodes,
        });
        started.push(workers);
      }
    } finally {
      process.off('worker', counted);
    }
    expect(started).toEqual([0, 1, 2, 2]);
    for (const name of ['2-true', '3-true', '2-false'])
      expect(same(join(dir, '1-false.gguf'), join(dir, `${name}.gguf`)), name).toBe(true);
  }, 60_000);

  it('this thread and a worker both take a share, fed as quantizeFile feeds them', async () => {
    // quantizeFile's writer keeps AHEAD_PER_THREAD chunks per thread going and starts one each
    // time the oldest is done, which is when this thread is free: the worker's queue must not
    // take the whole window (this thread idles), nor this thread every new chunk (the worker does).
    const rng = mulberry32(5);
    const values = Float32Array.from({ length: 1 << 17 }, () => rng.gaussian());
    const job = () => ({
      from: 'F32' as const,
      source: new Uint8Array(values.buffer.slice(0)),
      to: 'Q4_K' as const,
      rows: 128,
      columns: 1024,
      importance: null,
      measureError: false,
    });
    const pool = new ChunkPool(1, { here: true });
    try {
      // Once the worker is up (a batch given at once reaches it), counted from there.
      await Promise.all(Array.from({ length: 6 }, () => pool.run(job())));
      const before = { ...pool.done };
      const inFlight = Array.from({ length: 2 * AHEAD_PER_THREAD }, () => pool.run(job()));
      for (let i = 0; i < 40; i++) {
        await inFlight.shift();
        inFlight.push(pool.run(job()));
      }
      await Promise.all(inFlight);
      const here = pool.done.here - before.here;
      const workers = pool.done.workers - before.workers;
      expect(here + workers).toBe(40 + 2 * AHEAD_PER_THREAD);
      expect(workers).toBeGreaterThan(10);
      expect(here).toBeGreaterThan(10);
    } finally {
      pool.close();
    }
  });

  it('a chunk that fails on this thread rejects with its error', async () => {
    const pool = new ChunkPool(0, { here: true });
    try {
      const job = {
        from: 'F32' as const,
        source: new Uint8Array(8 * 4),
        to: 'Q4_K' as const,
        rows: 1,
        columns: 8,
        importance: null,
        measureError: true,
      };
      await expect(pool.run(job)).rejects.toThrow(/Q4_K: rows of 8 values are not whole blocks of 256/);
    } finally {
      pool.close();
    }
  });

  it('a worker reads a chunk named by its place in a file, as the bytes themselves would give', async () => {
    const dir = tempDir();
    const rng = mulberry32(3);
    const values = Float32Array.from({ length: 3 * 512 }, () => rng.gaussian());
    const path = join(dir, 'values.bin');
    // 100 bytes before the chunk: a span need not start at the file's start or be aligned.
    writeFileSync(path, Buffer.concat([Buffer.alloc(100, 7), Buffer.from(values.buffer)]));
    const job = {
      from: 'F32' as const,
      to: 'Q4_K' as const,
      rows: 3,
      columns: 512,
      importance: null,
      measureError: true,
    };
    const pool = new ChunkPool(2);
    try {
      const fromFile = await pool.run({ ...job, source: { path, offset: 100, length: values.byteLength } });
      const fromBytes = quantizeChunk({ ...job, source: new Uint8Array(values.buffer.slice(0)) });
      expect(Buffer.compare(Buffer.from(fromFile.bytes), Buffer.from(fromBytes.bytes))).toBe(0);
      expect(fromFile.squaredError).toBe(fromBytes.squaredError);
      await expect(pool.run({ ...job, source: { path, offset: 200, length: values.byteLength } })).rejects.toThrow(
        /values\.bin: file shrank while reading/,
      );
    } finally {
      pool.close();
    }
  });

  it("a failing chunk rejects with the worker's error", async () => {
    const pool = new ChunkPool(1);
    try {
      const job = {
        from: 'F32' as const,
        source: new Uint8Array(8 * 4),
        to: 'Q4_K' as const,
        rows: 1,
        columns: 8,
        importance: null,
        measureError: true,
      };
      await expect(pool.run(job)).rejects.toThrow(/Q4_K: rows of 8 values are not whole blocks of 256/);
    } finally {
      pool.close();
    }
  });

  it('gufo quantize --threads: same file from the sources and from the built CLI; a bad count is refused', () => {
    const dir = tempDir();
    const r = gufo(['quantize', STORIES_260K, join(dir, 'dev.gguf'), '--type', 'Q4_K_M', '--threads', '2'], {
      GUFO_DEV: '1',
    });
    expect(r.status, r.stderr).toBe(0);
    const built = gufo(['quantize', STORIES_260K, join(dir, 'built.gguf'), '--type', 'Q4_K_M', '--threads', '3']);
    expect(built.status, built.stderr).toBe(0);
    expect(same(join(dir, 'dev.gguf'), join(dir, 'built.gguf'))).toBe(true);
    const bad = gufo(['quantize', STORIES_260K, join(dir, 'bad.gguf'), '--type', 'Q4_K_M', '--threads', '0']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^gufo: --threads must be a whole number of at least 1, not "0"/);
  }, 120_000);
});
