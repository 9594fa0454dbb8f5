/**
 * `gufo bench` and `gufo kld` store their results in GUFO_HOME's database, as the app's own rows,
 * and the app lists them; a quality report the app runs on the same text gives the CLI's figures.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { BenchRun, QualityReport } from '../../src-preload/api';
import { quantizeFile } from '../../src-main/node/quantize';
import { ChatStore } from '../../src-main/node/store/chats';
import { isolatedEnv, testBackend } from '../support/backend';
import { gufo } from '../support/cli';
import { REPO_ROOT, STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

const { version } = JSON.parse(readFileSync(`${REPO_ROOT}/package.json`, 'utf8')) as { version: string };
const GPU_TIMEOUT = 300_000;
const TEXT =
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. ' +
  'One day, she saw a big, red ball. She wanted to play with it, but it was too high. Lily asked her mom for help.';

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function json<T>(r: { status: number | null; stdout: string; stderr: string }): T {
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
}

describe('gufo bench and gufo kld with GUFO_HOME', () => {
  it('say so in their help', () => {
    for (const command of ['bench', 'kld']) {
      const help = gufo([command, '--help']);
      expect(help.stdout).toContain(
        'With GUFO_HOME set, the result is also stored in the database there (GUFO_HOME/gufo.db)',
      );
    }
  });

  it(
    'store a benchmark run and a quality report that a back end over the same folder lists; the app measures the same',
    { timeout: 4 * GPU_TIMEOUT },
    async () => {
      const dir = tempDir();
      const q8 = join(dir, 'stories-q8_0.gguf');
      await quantizeFile(STORIES_260K, q8, 'Q8_0');
      const text = join(dir, 'story.txt');
      writeFileSync(text, TEXT);
      const home = join(dir, 'gufo-home');
      const env = { ...isolatedEnv(tempDir()), GUFO_HOME: home };
      const bench = gufo(['bench', STORIES_260K, '-p', '16', '-n', '8', '--json'], env, GPU_TIMEOUT);
      const benched = json<{ prefillTokS: number; decodeTokS: number; adapter: { name: string; backend: string } }>(
        bench,
      );
      expect(bench.stderr).toContain(`stored in ${join(home, 'gufo.db')}`);
      const kld = json<Record<string, number>>(
        gufo(['kld', STORIES_260K, q8, '--text', text, '--json'], env, GPU_TIMEOUT),
      );

      // The rows, read straight from the database file.
      const db = new Database(join(home, 'gufo.db'), { readonly: true });
      const models = db.prepare('SELECT id, path, source, sha256 FROM models ORDER BY id').all();
      const runs = db.prepare('SELECT * FROM bench_runs').all() as Record<string, unknown>[];
      const reports = db.prepare('SELECT * FROM quality_reports').all() as Record<string, unknown>[];
      db.close();
      const stories = realpathSync(STORIES_260K);
      expect(models).toEqual([
        { id: 1, path: stories, source: 'added', sha256: sha256(STORIES_260K) },
        { id: 2, path: realpathSync(q8), source: 'added', sha256: sha256(q8) },
      ]);
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({
        model_id: 1,
        model_path: stories,
        file_sha256: sha256(STORIES_260K),
        adapter: benched.adapter.name,
        backend: benched.adapter.backend,
        prompt_tokens: 16,
        gen_tokens: 8,
        prefill_tok_s: benched.prefillTokS,
        decode_tok_s: benched.decodeTokS,
        app_version: version,
      });
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatchObject({
        base_model_id: 1,
        quant_model_id: 2,
        base_sha256: sha256(STORIES_260K),
        quant_sha256: sha256(q8),
        export_id: null,
        text_source: 'file',
        text_label: text,
        positions: kld.positions,
        mean_kl: kld.meanKl,
        p99_kl: kld.p99Kl,
        top1: kld.top1,
        ppl_base: kld.pplBase,
        ppl_quant: kld.pplQuant,
        app_version: version,
      });

      // The app over the same folder lists both.
      const b = testBackend({ dataDir: home });
      const [run] = (await b.api.listBenchmarks(1)) as [BenchRun];
      expect(run).toMatchObject({ modelId: 1, decodeTokS: benched.decodeTokS, promptTokens: 16 });
      const [listed] = (await b.api.listQualityReports({ modelId: 2 })) as [QualityReport];
      expect(listed).toMatchObject({
        baseModelId: 1,
        quantModelId: 2,
        textSource: 'file',
        meanKl: kld.meanKl,
        top1: kld.top1,
      });

      // The same text, replayed from a chat by the app, gives the same figures: one implementation.
      const { chat } = await b.api.createChat({ modelId: 1 });
      const store = new ChatStore(b.context.db);
      store.setActiveLeaf(
        chat.id,
        store.addMessage({ chatId: chat.id, parentId: null, role: 'user', content: TEXT, status: 'done' }).id,
      );
      const job = await b.context.jobs.wait(
        await b.api.startQualityReport({ baseModelId: 1, quantModelId: 2, text: 'chats' }),
      );
      expect(job.status, job.error ?? '').toBe('done');
      const app = job.result as QualityReport;
      expect(app).toMatchObject({ textSource: 'chats', textLabel: '1 recent chat', positions: kld.positions });
      for (const key of ['meanKl', 'p99Kl', 'maxKl', 'top1', 'meanDeltaP', 'pplBase', 'pplQuant'] as const) {
        expect(Math.abs(app[key] - kld[key]!), key).toBeLessThanOrEqual(Math.abs(kld[key]!) * 1e-6);
      }
    },
  );

  it('leave every database alone without GUFO_HOME', { timeout: GPU_TIMEOUT }, () => {
    const home = tempDir();
    const r = gufo(['bench', STORIES_260K, '-p', '8', '-n', '4', '--json'], isolatedEnv(home), GPU_TIMEOUT);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('stored in');
    expect(existsSync(join(home, '.config', 'Gufo'))).toBe(false);
  });
});
