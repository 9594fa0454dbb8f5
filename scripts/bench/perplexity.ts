/**
 * `tsx scripts/bench.ts perplexity [--json]`: `gufo perplexity` on stories260K next to the same
 * figure from llama.cpp's own next-token probabilities (node-llama-cpp, CPU, one thread), with
 * flash attention off and on, since llama.cpp's two attention paths differ measurably on long
 * texts. Two texts: the app's built-in text in one window, and that text repeated past 2,048
 * tokens in windows of 512 (llama-perplexity's layout: BOS first, the second half scored).
 * Without GUFO_ADAPTER or VK_ICD_FILENAMES, the engine runs on SwiftShader where it is installed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILTIN_TEXT } from '../../src-main/core/quality/builtin-text';
import { perplexityOf, perplexityWindows } from '../../src-main/core/quality/perplexity';
import { SWIFTSHADER_ICD } from '../../src-main/engine/gpu/software-driver';
import type { Token } from 'node-llama-cpp';
import { llamaCpp } from '../../test/support/llama';
import { STORIES_260K } from '../../test/support/paths';

const BIN = fileURLToPath(new URL('../../bin/gufo.mjs', import.meta.url));
const LONG_TOKENS = 2048;
const CTX = 512;

interface Case {
  text: string;
  tokens: number;
  ctx: number;
  gufo: number;
  llamaNoFlash: number;
  llamaFlash: number;
}

/** Gufo's figure, as a user gets it from the built CLI. */
function gufoPerplexity(textFile: string, ctx: number): { ppl: number; tokens: number } {
  const icd =
    !process.env.GUFO_ADAPTER && !process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)
      ? { VK_ICD_FILENAMES: SWIFTSHADER_ICD }
      : {};
  const r = spawnSync(
    process.execPath,
    [BIN, 'perplexity', STORIES_260K, '--text', textFile, '--ctx', String(ctx), '--json'],
    {
      encoding: 'utf8',
      env: { ...process.env, ...icd },
    },
  );
  if (r.status !== 0) throw new Error(`gufo perplexity failed: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout) as { ppl: number; tokens: number };
}

/** llama-perplexity's figure from llama.cpp's probabilities, windows laid out as in test/cli/quality.test.ts. */
async function llamaPerplexity(text: string, ctx: number, flashAttention: boolean): Promise<number> {
  const model = await (await llamaCpp()).loadModel({ modelPath: STORIES_260K });
  try {
    const bos = model.tokens.bos as number;
    // The same windows as gufo perplexity's: llama-perplexity's layout.
    const { windows } = perplexityWindows([bos, ...(model.tokenize(text) as number[])], ctx, bos);
    let nll = 0;
    let scored = 0;
    for (const w of windows) {
      const context = await model.createContext({
        contextSize: Math.max(256, w.ids.length),
        threads: 1,
        flashAttention,
      });
      const outputs = await context
        .getSequence()
        .controlledEvaluate(w.ids.map((t) => [t as Token, { generateNext: { probabilities: true } }] as const));
      for (let j = w.first; j < w.ids.length - 1; j++) {
        const probabilities = outputs[j]?.next.probabilities;
        if (!probabilities) throw new Error(`llama.cpp gave no probabilities at position ${j}`);
        let sum = 0;
        for (const p of probabilities.values()) sum += p;
        nll -= Math.log((probabilities.get(w.ids[j + 1]! as Token) ?? 0) / sum);
        scored++;
      }
      await context.dispose();
    }
    return perplexityOf(nll, scored);
  } finally {
    await model.dispose();
  }
}

export async function benchPerplexity({ json }: { json: boolean }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gufo-bench-ppl-'));
  try {
    const long = Array.from({ length: 8 }, () => BUILTIN_TEXT).join('\n\n');
    const cases: Case[] = [];
    for (const [label, text, ctx] of [
      ['built-in text', BUILTIN_TEXT, CTX],
      ['built-in text ×8', long, CTX],
    ] as const) {
      process.stderr.write(`perplexity of ${label}\n`);
      const file = join(dir, 'text.txt');
      writeFileSync(file, text);
      const gufo = gufoPerplexity(file, ctx);
      if (label !== 'built-in text' && gufo.tokens < LONG_TOKENS)
        throw new Error(`${label}: ${gufo.tokens} tokens, fewer than ${LONG_TOKENS}`);
      cases.push({
        text: label,
        tokens: gufo.tokens,
        ctx,
        gufo: gufo.ppl,
        llamaNoFlash: await llamaPerplexity(text, ctx, false),
        llamaFlash: await llamaPerplexity(text, ctx, true),
      });
    }
    if (json) {
      console.log(JSON.stringify({ suite: 'perplexity', model: 'stories260K.gguf', cases }, null, 2));
      return;
    }
    console.log('text                tokens  ctx   gufo      llama.cpp (no flash)  llama.cpp (flash)');
    for (const c of cases) {
      const cells = [c.gufo, c.llamaNoFlash, c.llamaFlash].map((p) => p.toFixed(4));
      console.log(
        `${c.text.padEnd(18)} ${String(c.tokens).padStart(7)} ${String(c.ctx).padStart(4)}   ${cells[0]!.padEnd(9)} ${cells[1]!.padEnd(21)} ${cells[2]}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
