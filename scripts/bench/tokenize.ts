/**
 * `npm run bench:tokenize`: 1 MB of mixed text per tokenizer, ours next to llama.cpp's
 * (node-llama-cpp) in the same process, plus the time to build a tokenizer from the Qwen 3
 * vocabulary (151k tokens, 151k merges). Medians of interleaved runs; ratio > 1: ours is faster.
 * Two figures for ours, since the BPE encoder caches each word's ids: `warm`, one tokenizer that
 * has already seen the text (run 0 warms it), and `cold`, a fresh tokenizer per run (built
 * untimed) whose caches start empty. llama.cpp keeps no such cache, so the same times serve both.
 *   tsx scripts/bench.ts tokenize [--json] [--vocabs llama3,qwen3]
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTokenizer } from '../../src-main/core/tokenizer/index';
import { readVocab } from '../../src-main/core/tokenizer/vocab';
import { openGguf } from '../../src-main/node/gguf-io';
import { writeHfVocabGguf, LLAMA3_SPEC, QWEN3_SPEC } from '../../test/support/hf-vocab';
import { llamaCpp } from '../../test/support/llama';
import { tokenizerCorpus } from '../../test/support/tokenizer-corpus';

const VOCABS = resolve(fileURLToPath(new URL('../../..', import.meta.url)), 'shared', 'models', 'vocab');
const RUNS = 5;
const TEXT_BYTES = 1_000_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

function timed(f: () => void): number {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}

/**
 * ~1 MB of the test corpus (many scripts, emoji, code, whitespace runs) in 4 KB documents, never
 * repeating itself: a cold tokenizer must not warm up on a second copy of the same text.
 */
function mixedText(): string[] {
  const corpus = tokenizerCorpus(24_000, 7);
  let text = '';
  for (let i = 0; text.length < TEXT_BYTES; i++) {
    if (i === corpus.length) throw new Error(`the tokenizer corpus holds fewer than ${TEXT_BYTES} characters`);
    text += corpus[i] + '\n';
  }
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += 4096) chunks.push(text.slice(i, i + 4096));
  return chunks;
}

/** `--vocabs llama3,qwen3`: only the vocabularies whose file name (without .gguf) is listed. */
function vocabFilter(args: readonly string[]): (path: string) => boolean {
  const i = args.findIndex((a) => a === '--vocabs' || a.startsWith('--vocabs='));
  if (i < 0) return () => true;
  const list = args[i]!.includes('=') ? args[i]!.slice('--vocabs='.length) : args[i + 1];
  if (!list)
    throw new Error(
      '--vocabs needs a comma-separated list of vocabulary names, e.g. --vocabs llama3,qwen3,ggml-vocab-gpt-2',
    );
  const names = new Set(list.split(',').map((n) => n.trim()));
  return (path) => names.has(basename(path, '.gguf'));
}

export async function benchTokenize({ json, args }: { json: boolean; args: readonly string[] }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gufo-bench-tok-'));
  try {
    const built = [
      await writeHfVocabGguf(LLAMA3_SPEC, join(dir, 'llama3.gguf')),
      await writeHfVocabGguf(QWEN3_SPEC, join(dir, 'qwen3.gguf')),
    ];
    const files = [
      ...readdirSync(VOCABS)
        .filter((f) => f.endsWith('.gguf'))
        .sort()
        .map((f) => join(VOCABS, f)),
      ...built,
    ].filter(vocabFilter(args));
    const chunks = mixedText();
    const llama = await llamaCpp();
    const rows = [];
    for (const path of files) {
      process.stderr.write(`tokenizing with ${path}\n`);
      const { gguf, file } = openGguf(path);
      const ours = createTokenizer(readVocab(gguf));
      const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
      const [oursMs, coldMs, llamaMs]: [number[], number[], number[]] = [[], [], []];
      for (let run = 0; run <= RUNS; run++) {
        const fresh = createTokenizer(readVocab(gguf));
        const warm = timed(() => chunks.forEach((c) => ours.tokenize(c)));
        const theirs = timed(() => chunks.forEach((c) => model.tokenize(c)));
        const cold = timed(() => chunks.forEach((c) => fresh.tokenize(c)));
        // Run 0 warms up the JIT, llama.cpp and `ours`' caches.
        if (run > 0) {
          oursMs.push(warm);
          llamaMs.push(theirs);
          coldMs.push(cold);
        }
      }
      await model.dispose();
      file.close();
      const llamaMedian = median(llamaMs);
      rows.push({
        vocab: path.split('/').pop()!,
        oursMs: median(oursMs),
        oursColdMs: median(coldMs),
        llamaMs: llamaMedian,
        ratio: llamaMedian / median(oursMs),
        coldRatio: llamaMedian / median(coldMs),
      });
      const r = rows.at(-1)!;
      process.stderr.write(
        `  warm ${r.oursMs.toFixed(0)} ms, cold ${r.oursColdMs.toFixed(0)} ms, llama.cpp ${r.llamaMs.toFixed(0)} ms\n`,
      );
    }
    const qwen = built[1]!;
    const buildMs = median(
      Array.from({ length: RUNS }, () => {
        const { gguf, file } = openGguf(qwen);
        const ms = timed(() => createTokenizer(readVocab(gguf)));
        file.close();
        return ms;
      }),
    );
    if (json) {
      process.stdout.write(JSON.stringify({ textBytes: TEXT_BYTES, rows, qwen3BuildMs: buildMs }, null, 2) + '\n');
      return;
    }
    const head = ['vocab'.padEnd(34), 'warm ms', 'cold ms', 'llama.cpp ms', 'warm ratio', 'cold ratio'];
    console.log(`${head.map((h, i) => (i ? h.padStart(13) : h)).join(' ')}  goal ≥ 0.5× (cold)`);
    for (const r of rows) {
      const cells = [r.oursMs, r.oursColdMs, r.llamaMs].map((ms) => ms.toFixed(0).padStart(13));
      const ratios = [r.ratio, r.coldRatio].map((x) => (x.toFixed(2) + '×').padStart(13));
      console.log(`${r.vocab.padEnd(34)} ${[...cells, ...ratios].join(' ')}  ${r.coldRatio >= 0.5 ? 'ok' : 'MISS'}`);
    }
    console.log(
      '\nwarm: one tokenizer that has seen the text before; cold: a fresh tokenizer per run (empty word cache)',
    );
    console.log(
      `build a tokenizer from the Qwen 3 vocabulary (151,669 tokens): ${buildMs.toFixed(0)} ms (goal < 200 ms) ${buildMs < 200 ? 'ok' : 'MISS'}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
