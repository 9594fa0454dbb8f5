import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { gufo } from '../support/cli';
import { REPO_ROOT, STORIES_260K } from '../support/paths';
import { STORIES_GREEDY, STORIES_PROMPT } from './stories-fixture';

describe('gufo run', () => {
  it("--json: prompt ids, llama.cpp's greedy tokens, text, why it stopped, timings, adapter and memory", () => {
    const r = gufo(['run', STORIES_260K, '--prompt', 'Once upon a time', '-n', '16', '--json', '--top-logprobs', '2']);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.promptIds).toEqual(STORIES_PROMPT);
    expect(doc.ids).toEqual(STORIES_GREEDY.slice(0, 16));
    expect(doc.text).toBe(', there was a little girl named Lily. She loved to play');
    expect(doc.logprobs).toHaveLength(16);
    expect(doc.logprobs[0][0][0]).toBe(STORIES_GREEDY[0]);
    expect(Object.keys(doc.timings).sort()).toEqual(['decodeTokS', 'loadMs', 'prefillTokS', 'ttftMs']);
    expect(doc.adapter.name).toBeTruthy();
    expect(doc.memory).toEqual({ fileTensorBytes: 1171200, residentWeightBytes: 1171200, kvBytes: expect.any(Number) });
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
    const a = JSON.parse(gufo(args).stdout);
    const b = JSON.parse(gufo(args).stdout);
    expect(a.ids).toEqual(b.ids);
  });

  it('explains what is wrong with its arguments', () => {
    expect(gufo(['run', STORIES_260K]).stderr).toMatch(/--prompt "<text>" is required/);
    expect(gufo(['run', STORIES_260K, '--prompt', 'x', '--temp', 'hot']).stderr).toMatch(/--temp must be a number/);
    expect(gufo(['run', '/nonexistent.gguf', '--prompt', 'x']).status).toBe(1);
  });
});

describe('gufo bench', () => {
  it('--json: speeds, bytes per token and the roofline fraction', () => {
    const r = gufo(['bench', STORIES_260K, '-p', '16', '-n', '8', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ depth: 0, promptTokens: 16, genTokens: 8 });
    for (const key of ['prefillTokS', 'decodeTokS', 'bytesPerToken', 'copyBytesPerSecond', 'rooflineFraction']) {
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
