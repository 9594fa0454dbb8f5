/**
 * `npm run bench:tokenize`: 1 MB of mixed text per tokenizer, ours next to llama.cpp's
 * (node-llama-cpp) in the same process, plus the time to build a tokenizer from the Qwen 3
 * vocabulary (151k tokens, 151k merges). Medians of interleaved runs; ratio > 1: ours is faster.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
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

/** ~1 MB of the test corpus (many scripts, emoji, code, whitespace runs) in 4 KB documents. */
function mixedText(): string[] {
  const corpus = tokenizerCorpus(6000, 7);
  let text = '';
  for (let i = 0; text.length < TEXT_BYTES; i++) text += corpus[i % corpus.length] + '\n';
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += 4096) chunks.push(text.slice(i, i + 4096));
  return chunks;
}

export async function benchTokenize({ json }: { json: boolean }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gufo-bench-tok-'));
  try {
    const built = [await writeHfVocabGguf(LLAMA3_SPEC, join(dir, 'llama3.gguf')), await writeHfVocabGguf(QWEN3_SPEC, join(dir, 'qwen3.gguf'))];
    const files = [...readdirSync(VOCABS).filter((f) => f.endsWith('.gguf')).sort().map((f) => join(VOCABS, f)), ...built];
    const chunks = mixedText();
    const llama = await llamaCpp();
    const rows = [];
    for (const path of files) {
      process.stderr.write(`tokenizing with ${path}\n`);
      const { gguf, file } = openGguf(path);
      const ours = createTokenizer(readVocab(gguf));
      const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
      const [oursMs, llamaMs]: number[][] = [[], []];
      for (let run = 0; run <= RUNS; run++) {
        const a = timed(() => chunks.forEach((c) => ours.tokenize(c)));
        const b = timed(() => chunks.forEach((c) => model.tokenize(c)));
        // Run 0 warms both up.
        if (run > 0) (oursMs.push(a), llamaMs.push(b));
      }
      await model.dispose();
      file.close();
      rows.push({ vocab: path.split('/').pop()!, oursMs: median(oursMs), llamaMs: median(llamaMs), ratio: median(llamaMs) / median(oursMs) });
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
    console.log(`${'vocab'.padEnd(34)} ${'ours ms'.padStart(9)} ${'llama.cpp ms'.padStart(13)} ${'speed ratio'.padStart(12)}  goal ≥ 0.5×`);
    for (const r of rows) {
      console.log(`${r.vocab.padEnd(34)} ${r.oursMs.toFixed(0).padStart(9)} ${r.llamaMs.toFixed(0).padStart(13)} ${(r.ratio.toFixed(2) + '×').padStart(12)}  ${r.ratio >= 0.5 ? 'ok' : 'MISS'}`);
    }
    console.log(`\nbuild a tokenizer from the Qwen 3 vocabulary (151,669 tokens): ${buildMs.toFixed(0)} ms (goal < 200 ms) ${buildMs < 200 ? 'ok' : 'MISS'}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
