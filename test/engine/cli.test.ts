import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { gufo, type BenchJson, type RunJson } from '../support/cli';
import { REPO_ROOT, STORIES_260K } from '../support/paths';
import { writeRandomModel } from '../support/test-models';
import { STORIES_GREEDY, STORIES_PROMPT } from './stories-fixture';

describe('gufo run', () => {
  it("--json: prompt ids, llama.cpp's greedy tokens, text, why it stopped, timings, adapter and memory", () => {
    const r = gufo(['run', STORIES_260K, '--prompt', 'Once upon a time', '-n', '16', '--json', '--top-logprobs', '2']);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as RunJson;
    expect(doc.promptIds).toEqual(STORIES_PROMPT);
    expect(doc.ids).toEqual(STORIES_GREEDY.slice(0, 16));
    expect(doc.text).toBe(', there was a little girl named Lily. She loved to play');
    expect(doc.logprobs).toHaveLength(16);
    expect(doc.logprobs?.[0]?.[0]?.[0]).toBe(STORIES_GREEDY[0]);
    expect(Object.keys(doc.timings).sort()).toEqual(['decodeTokS', 'loadMs', 'prefillTokS', 'ttftMs']);
    expect(doc.adapter.name).toBeTruthy();
    expect(doc.memory).toEqual({
      fileTensorBytes: 1171200,
      residentWeightBytes: 1171200,
      kvBytes: expect.any(Number) as number,
      kvTypes: { k: 'f16', v: 'f16' },
    });
    expect(doc.stopReason).toBe('length');
    expect(Object.keys(doc).sort()).toEqual([
      'adapter',
      'ids',
      'logprobs',
      'memory',
      'promptIds',
      'stopReason',
      'text',
      'timings',
    ]);
  });

  it('streams text to stdout and timings to stderr; a seed makes sampling reproducible', () => {
    const plain = gufo(['run', STORIES_260K, '--prompt', 'Once upon a time', '-n', '8']);
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stdout).toBe(', there was a little girl\n');
    expect(plain.stderr).toMatch(/tok\/s/);
    const args = [
      'run',
      STORIES_260K,
      '--prompt',
      'Once upon a time',
      '-n',
      '12',
      '--temp',
      '1',
      '--seed',
      '3',
      '--json',
    ];
    const a = JSON.parse(gufo(args).stdout) as RunJson;
    const b = JSON.parse(gufo(args).stdout) as RunJson;
    expect(a.ids).toEqual(b.ids);
  });

  it('explains what is wrong with its arguments', () => {
    expect(gufo(['run', STORIES_260K]).stderr).toMatch(/--prompt "<text>" is required/);
    expect(gufo(['run', STORIES_260K, '--prompt', 'x', '--temp', 'hot']).stderr).toMatch(/--temp must be a number/);
    expect(gufo(['run', '/nonexistent.gguf', '--prompt', 'x']).status).toBe(1);
    expect(gufo(['run', STORIES_260K, '--prompt', 'x', '--cache-type-k', 'q5_1']).stderr).toMatch(
      /--cache-type-k must be one of f16, q8_0, q4_0, f32/,
    );
    // stories260K's heads of 8 hold no block of 32, as llama.cpp says too.
    expect(gufo(['run', STORIES_260K, '--prompt', 'x', '--cache-type-v', 'q8_0']).stderr).toMatch(
      /a q8_0 KV cache needs a head size that is a multiple of 32/,
    );
  });

  it("--cache-type-k/-v: q8_0 and q4_0 caches take llama.cpp's bytes", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gufo-cli-kv-'));
    try {
      const path = join(dir, 'heads-64.gguf');
      await writeRandomModel(path, { nLayer: 2, nEmbd: 128, nFf: 256, nHead: 2, seed: 5 });
      const kvBytes = (...flags: string[]) => {
        const r = gufo(['run', path, '--prompt', 'x', '-n', '2', '--ctx', '256', '--json', ...flags]);
        expect(r.status, r.stderr).toBe(0);
        return (JSON.parse(r.stdout) as RunJson).memory;
      };
      // 2 layers × 256 positions × 128 elements: f16 2 bytes each, q8_0 34 and q4_0 18 a block of 32.
      expect(kvBytes()).toMatchObject({ kvBytes: 2 * 2 * 256 * 128 * 2, kvTypes: { k: 'f16', v: 'f16' } });
      expect(kvBytes('--cache-type-k', 'q8_0', '--cache-type-v', 'q4_0')).toMatchObject({
        kvBytes: 2 * 256 * 4 * (34 + 18),
        kvTypes: { k: 'q8_0', v: 'q4_0' },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('gufo bench', () => {
  it('--json: speeds, bytes per token and the roofline fraction', () => {
    const r = gufo(['bench', STORIES_260K, '-p', '16', '-n', '8', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as BenchJson;
    expect(doc).toMatchObject({ depth: 0, promptTokens: 16, genTokens: 8 });
    for (const key of [
      'prefillTokS',
      'decodeTokS',
      'bytesPerToken',
      'copyBytesPerSecond',
      'rooflineFraction',
    ] as const) {
      expect(doc[key], key).toBeGreaterThan(0);
    }
    expect(doc.rooflineFraction).toBeLessThan(1.5);
    expect(doc.memory.residentWeightBytes).toBe(1171200);
    expect(doc.adapter.name).toBeTruthy();
  });
});

describe('gufo chat', () => {
  const bin = join(REPO_ROOT, 'bin/gufo.mjs');

  it('answers each line of the conversation, then exits at the end of input', () => {
    const r = spawnSync(process.execPath, [bin, 'chat', STORIES_260K, '--temp', '0', '-n', '6'], {
      input: 'Once upon a time\nThe dog\n',
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split('\n').filter((l) => l.trim() !== '')).toHaveLength(2);
    expect(r.stderr.match(/\[6 tokens/g)).toHaveLength(2);
  });

  it('Ctrl-C stops the answer; a second Ctrl-C exits', async () => {
    const child = spawn(process.execPath, [bin, 'chat', STORIES_260K, '--temp', '0', '-n', '1000'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.stdin.write('Once upon a time\n');
    // The answer has started streaming: stop it.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.kill('SIGINT');
    await vi.waitFor(() => expect(stderr).toMatch(/\[stopped\]/), { timeout: 20_000 });
    expect(stderr).toMatch(/\[\d+ tokens/);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});
