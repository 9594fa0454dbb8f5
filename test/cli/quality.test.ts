/**
 * gufo perplexity, gufo kld and gufo tensor-error as a user runs them. Perplexity is checked
 * against llama.cpp (node-llama-cpp): its own tokens and next-token probabilities, over the
 * positions llama-perplexity scores, laid out here independently of Gufo's window code.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GgufType } from '../../src-main/core/gguf/values';
import { openGguf, tensorChunks, writeGguf } from '../../src-main/node/gguf-io';
import { quantizeFile, type QuantizeReport } from '../../src-main/node/quantize';
import { llamaTeacherForced } from '../engine/llama-reference';
import { gufo } from '../support/cli';
import { llamaCpp } from '../support/llama';
import { STORIES_260K, TINY_RANDOM_LLAMA } from '../support/paths';
import { tempDir } from '../support/temp';

const TEXT =
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. ' +
  'One day, she saw a big, red ball. She wanted to play with it, but it was too high. Lily asked her mom for help. ' +
  'Her mom said, "Let\'s get it together!" They tried and tried, and at last the ball came down. Lily was very happy.\n';

const GPU_TIMEOUT = 300_000;

/** Writes `text` to a file in `dir`. */
function textFile(dir: string, text: string, name = 'text.txt'): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function json<T>(r: { status: number | null; stdout: string; stderr: string }): T {
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
}

/**
 * llama-perplexity's figure from llama.cpp's own probabilities: BOS + tokens; chunks of `ctx` with
 * BOS first, positions ctx/2 … ctx−2 scored; a text that fits in one window scored whole.
 */
async function llamaPerplexity(text: string, ctx: number): Promise<{ ppl: number; tokens: number; scored: number }> {
  const model = await (await llamaCpp()).loadModel({ modelPath: STORIES_260K });
  const bos = model.tokens.bos as number;
  const tokens = [bos, ...(model.tokenize(text) as number[])];
  await model.dispose();
  const windows: { ids: number[]; first: number }[] =
    tokens.length <= ctx
      ? [{ ids: tokens, first: 0 }]
      : Array.from({ length: Math.floor(tokens.length / ctx) }, (_, c) => ({
          ids: [bos, ...tokens.slice(c * ctx + 1, (c + 1) * ctx)],
          first: Math.floor(ctx / 2),
        }));
  let nll = 0;
  let scored = 0;
  for (const w of windows) {
    const logProbs = await llamaTeacherForced(STORIES_260K, w.ids, 512, Math.max(256, w.ids.length));
    for (let j = w.first; j < w.ids.length - 1; j++) {
      nll -= logProbs[j]![w.ids[j + 1]!]!;
      scored++;
    }
  }
  return { ppl: Math.exp(nll / scored), tokens: tokens.length, scored };
}

interface PerplexityJson {
  ppl: number;
  tokens: number;
  scored: number;
  ctx: number;
  windows: number;
}

describe('gufo perplexity', () => {
  it(
    "equals the perplexity of llama.cpp's next-token probabilities over the same scored tokens, in one window and in windows of 40",
    async () => {
      const text = textFile(tempDir(), TEXT);
      for (const ctx of [512, 40]) {
        const ours = json<PerplexityJson>(
          gufo(['perplexity', STORIES_260K, '--text', text, '--ctx', String(ctx), '--json'], {}, GPU_TIMEOUT),
        );
        const ref = await llamaPerplexity(TEXT, ctx);
        console.log(
          `stories260K, --ctx ${ctx}: PPL ${ours.ppl.toFixed(4)} over ${ours.scored} of ${ours.tokens} tokens in ${ours.windows} windows; llama.cpp ${ref.ppl.toFixed(4)}`,
        );
        expect(ours).toMatchObject({ tokens: ref.tokens, scored: ref.scored });
        expect(Math.abs(ours.ppl / ref.ppl - 1)).toBeLessThan(0.005);
        if (ctx === 512) expect(ours).toMatchObject({ windows: 1, scored: ref.tokens - 1, ctx: ref.tokens });
        else expect(ours).toMatchObject({ windows: 3, scored: 3 * 19, ctx: 40 }); // 123 tokens: 3 left over
      }
    },
    2 * GPU_TIMEOUT,
  );

  it('explains bad input in one line naming the file', async () => {
    const dir = tempDir();
    const long = textFile(dir, TEXT);
    const fail = (args: string[], message: string) => {
      const r = gufo(['perplexity', ...args]);
      expect(r.status, r.stdout).toBe(1);
      expect(r.stderr).toBe(`gufo: ${message}\n`);
    };
    fail([STORIES_260K], '--text <file.txt> is required (see gufo perplexity --help)');
    fail(
      [STORIES_260K, '--text', join(dir, 'missing.txt')],
      `${join(dir, 'missing.txt')}: cannot read the text file (no such file or folder)`,
    );
    fail([STORIES_260K, '--text', textFile(dir, '', 'empty.txt')], `${join(dir, 'empty.txt')}: the text file is empty`);
    fail([STORIES_260K, '--text', long, '--ctx', '1'], '--ctx must be at least 2, not 1');
    fail(
      [STORIES_260K, '--text', long, '--ctx', '2'],
      `${long}: a context of 2 tokens scores no token of a text longer than it (123 tokens); use a context of at least 3`,
    );

    // A vocabulary without BOS and a one-token text: nothing to predict.
    const noBos = join(dir, 'no-bos.gguf');
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      const kvs = [...gguf.kvs, { key: 'tokenizer.ggml.add_bos_token', type: GgufType.BOOL, value: false }];
      await writeGguf(noBos, { kvs, tensors: gguf.tensors.map(({ name, type, ne }) => ({ name, type, ne })) }, (i) =>
        tensorChunks(gguf, gguf.tensors[i]!),
      );
    } finally {
      file.close();
    }
    const one = textFile(dir, 'a', 'one.txt');
    const r = gufo(['perplexity', noBos, '--text', one]);
    expect(r.stderr).toBe(`gufo: ${one}: the text gives 1 token; at least 2 are needed to score one\n`);
  });
});

describe('gufo kld and gufo tensor-error on stories260K and its Q8_0 export', () => {
  let dir: string;
  let q8: string;
  let report: QuantizeReport;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gufo-kld-test-'));
    q8 = join(dir, 'stories-q8_0.gguf');
    report = await quantizeFile(STORIES_260K, q8, 'Q8_0');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(
    "KL < 1e-3, and the base perplexity is gufo perplexity's over the same positions",
    () => {
      const text = textFile(dir, TEXT);
      const kld = json<Record<string, number>>(
        gufo(['kld', STORIES_260K, q8, '--text', text, '--ctx', '40', '--json'], {}, GPU_TIMEOUT),
      );
      const ppl = json<PerplexityJson>(
        gufo(['perplexity', STORIES_260K, '--text', text, '--ctx', '40', '--json'], {}, GPU_TIMEOUT),
      );
      console.log(`stories260K vs its Q8_0 export, --ctx 40: ${JSON.stringify(kld)}`);
      expect(Object.keys(kld).sort()).toEqual([
        'maxKl',
        'meanDeltaP',
        'meanDeltaPNext',
        'meanKl',
        'p99Kl',
        'positions',
        'pplBase',
        'pplQuant',
        'top1',
      ]);
      expect(kld.positions).toBe(ppl.scored);
      expect(kld.meanKl).toBeGreaterThan(0);
      expect(kld.meanKl).toBeLessThan(1e-3);
      expect(kld.p99Kl).toBeGreaterThanOrEqual(kld.meanKl!);
      expect(kld.maxKl).toBeGreaterThanOrEqual(kld.p99Kl!);
      expect(kld.top1).toBeGreaterThanOrEqual(0.9);
      expect(Math.abs(kld.meanDeltaP!)).toBeLessThan(0.01);
      expect(kld.pplBase).toBeCloseTo(ppl.ppl, 10);
      expect(Math.abs(kld.pplQuant! / kld.pplBase! - 1)).toBeLessThan(0.01);

      const plain = gufo(['kld', STORIES_260K, q8, '--text', text, '--ctx', '40'], {}, GPU_TIMEOUT);
      expect(plain.status, plain.stderr).toBe(0);
      expect(plain.stdout).toMatch(
        /^positions +57\nmean KL +[\d.]+e-\d+\np99 KL .*\nmax KL .*\nsame top token +[\d.]+%\n/,
      );
      expect(plain.stderr).toContain('57 of 123 tokens scored in 3 windows of 40');
    },
    4 * GPU_TIMEOUT,
  );

  it('kld refuses models with different vocabularies', () => {
    const text = textFile(dir, TEXT);
    const r = gufo(['kld', STORIES_260K, TINY_RANDOM_LLAMA, '--text', text]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `gufo: ${TINY_RANDOM_LLAMA}: its vocabulary has 32000 tokens, not 512 (the base ${STORIES_260K} differs); KL divergence needs the same vocabulary\n`,
    );
  });

  it('tensor-error: per tensor the RMSE gufo quantize measured, pooled by role and layer', () => {
    interface Figures {
      elements: number;
      rmse: number;
      relativeError: number | null;
      snrDb: number | null;
    }
    const r = json<{
      source: string;
      export: string;
      tensors: (Figures & { name: string; sourceType: string; exportType: string })[];
      byLayer: (Figures & { layer: number | null })[];
      byRole: (Figures & { role: string })[];
      total: Figures;
    }>(gufo(['tensor-error', STORIES_260K, q8, '--json']));
    expect(r.tensors).toHaveLength(report.tensors.length);
    for (const t of r.tensors) {
      const q = report.tensors.find((x) => x.name === t.name)!;
      expect(t.exportType, t.name).toBe(q.to);
      expect(t.rmse, t.name).toBeCloseTo(q.rmse!, 12);
      // Unchanged tensors have no error and no finite SNR.
      if (q.from === q.to) expect(t).toMatchObject({ rmse: 0, relativeError: 0, snrDb: null });
      else expect(t.snrDb!, t.name).toBeGreaterThan(30); // 8.5 bits a weight
    }
    expect(r.byLayer.map((g) => g.layer)).toEqual([0, 1, 2, 3, 4, null]);
    expect(r.byRole.map((g) => g.role)).toContain('ffn_down');
    expect(r.total.elements).toBe(r.tensors.reduce((n, t) => n + t.elements, 0));

    const plain = gufo(['tensor-error', STORIES_260K, q8, '--tensors']);
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/^role +elements +RMSE +relative +SNR dB\n/);
    expect(plain.stdout).toMatch(/\nlayer +elements/);
    expect(plain.stdout).toMatch(/\ntotal +292,800 /);
    expect(plain.stdout).toMatch(/\nblk\.0\.attn_q\.weight +F32 → Q8_0 +4,096 /);

    const bad = gufo(['tensor-error', STORIES_260K, TINY_RANDOM_LLAMA]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(
      new RegExp(
        `^gufo: ${TINY_RANDOM_LLAMA}: tensor "token_embd.weight" has shape \\[\\d+, 32000\\], in ${STORIES_260K} it has \\[64, 512\\]\\n$`,
      ),
    );
  });
});
