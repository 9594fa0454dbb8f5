/**
 * Issue #14: a copy of stories260K with `llama.block_count = 2^31` ran `gufo inspect` out of
 * heap and took `gufo serve` down with it. Every numeric metadata key of the real models, set to
 * each hostile value (or given the wrong type), must give a correct summary or one clear line
 * naming the key — quickly and in little memory — in inspect, the library, the engine's
 * hyper-parameters and the tokenizer. The copies run in one child process (with a small heap, so
 * a regression fails fast instead of swapping), whose peak RSS is the measure.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Outcome, VariantResult } from './fixtures/value-fuzz-child';
import { MODELS, REPO_ROOT } from '../support/paths';
import { tempDir } from '../support/temp';

const CHILD = join(REPO_ROOT, 'test/core/fixtures/value-fuzz-child.ts');
/** The two real models, and a vocabulary-only file (no tensors: only the sane bounds apply). */
const FILES = ['stories260K.gguf', 'llama-2-tiny-random.gguf', 'vocab/ggml-vocab-phi-3.gguf'];
const MAX_MS = 2000;
const MAX_RSS_BYTES = 200 * 2 ** 20;

/** Summary fields that follow a key; the first states the key's value. */
const FIELDS_OF: Record<string, string[]> = {
  block_count: ['layers', 'kvCache'],
  context_length: ['contextLength', 'kvCache'],
  embedding_length: ['embeddingSize', 'headSize', 'valueHeadSize', 'kvCache'],
  feed_forward_length: ['feedForwardSize'],
  'attention.head_count': ['heads', 'kvHeads', 'headSize', 'valueHeadSize', 'kvCache'],
  'attention.head_count_kv': ['kvHeads', 'kvCache'],
  'general.file_type': ['fileType'],
};

/** The hostile values a count may hold (hostile-values.ts labels): any other must be refused. */
const COUNT_VALUES: Record<string, number> = { '0': 0, '2^31': 2 ** 31, '2^32-1': 2 ** 32 - 1 };

function fieldsOf(key: string): string[] {
  return FIELDS_OF[key.startsWith('general.') ? key : key.slice(key.indexOf('.') + 1)] ?? [];
}

interface ChildReport {
  bases: Record<string, VariantResult>;
  results: VariantResult[];
  maxRssBytes: number;
}

function runChild(): ChildReport {
  // A small heap: a metadata-sized allocation fails in seconds rather than after a minute of swapping.
  const r = spawnSync(
    process.execPath,
    ['--max-old-space-size=160', '--import', 'tsx', CHILD, tempDir(), ...FILES.map((f) => join(MODELS, f))],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 2 ** 20,
      timeout: 150_000,
    },
  );
  if (r.status !== 0)
    throw new Error(`the fuzz child failed (status ${r.status}, signal ${r.signal}):\n${r.stderr.slice(-3000)}`);
  return JSON.parse(r.stdout) as ChildReport;
}

const STEPS = ['inspectText', 'inspectJson', 'library', 'hparams', 'vocab'] as const;

/** Within the time limit; an error is one line naming the key, unless the unchanged file fails the same way. */
function checkOutcome(where: string, key: string, outcome: Outcome, base: Outcome): void {
  expect(outcome.ms, where).toBeLessThan(MAX_MS);
  if (outcome.ok) return;
  const message = outcome.value as string;
  expect(message, where).not.toContain('\n');
  if (base.ok || message !== base.value) expect(message, where).toContain(`${key}`);
}

/** A summary accepted for a hostile value states it, and changes nothing the key does not feed. */
function checkSummary(where: string, result: VariantResult, base: Record<string, unknown>): void {
  const summary = result.inspectJson.value as Record<string, unknown>;
  const changed = fieldsOf(result.key);
  for (const [field, value] of Object.entries(base)) {
    if (!changed.includes(field)) expect(summary[field], `${where}: ${field}`).toEqual(value);
  }
  const direct = changed[0];
  if (direct && direct !== 'fileType') {
    const value = COUNT_VALUES[result.label.slice(result.label.lastIndexOf('= ') + 2)];
    expect(value, `${where}: accepted`).toBeDefined();
    expect(summary[direct], `${where}: ${direct}`).toBe(value);
  }
  const kv = summary.kvCache as { bytes: number; bytesPerToken: number } | null;
  if (kv)
    for (const n of [kv.bytes, kv.bytesPerToken])
      expect(Number.isFinite(n) && n >= 0, `${where}: kvCache ${n}`).toBe(true);
}

describe('GGUF metadata values under fuzzing', () => {
  it(
    'every numeric key of the real models set to 0, -1, 2^31, 2^32-1, 2^63, NaN, ±Inf or a wrong type: a correct summary or one line naming the key, fast and small',
    { timeout: 180_000 },
    () => {
      const report = runChild();
      expect(report.results.length).toBeGreaterThan(300);
      let refused = 0;
      for (const result of report.results) {
        const where = `${result.model}, ${result.label}`;
        const base = report.bases[result.model]!;
        for (const step of STEPS) {
          const outcome = result[step];
          if (outcome) checkOutcome(`${where}, ${step}`, result.key, outcome, base[step]!);
        }
        // Text and JSON, library and inspect agree on whether the file is usable.
        expect(result.inspectText.ok, where).toBe(result.inspectJson.ok);
        expect(result.library.ok, where).toBe(result.inspectJson.ok);
        if (result.inspectJson.ok) checkSummary(where, result, base.inspectJson.value as Record<string, unknown>);
        else refused++;
      }
      // Both outcomes occur: hostile counts are refused, harmless values still summarize.
      expect(refused).toBeGreaterThan(0);
      expect(refused).toBeLessThan(report.results.length);
      expect(report.maxRssBytes).toBeLessThan(MAX_RSS_BYTES);
    },
  );
});
