/**
 * `gufo quantize` records its output as an export of its input in the app's database (GUFO_HOME's,
 * else the OS user-data folder's, as the app), as the app records its own: the app's inspector
 * then knows what the file was made from. Nothing is written into the file for it.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TensorErrorComparison } from '../../src-preload/api';
import { isolatedEnv, testBackend } from '../support/backend';
import { gufo } from '../support/cli';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

describe('gufo quantize with GUFO_HOME', () => {
  it("records the file as an export of its input, which the app's tensor error compares it with", async () => {
    const dir = tempDir();
    const home = join(dir, 'gufo-home');
    const q8 = join(dir, 'stories-q8.gguf');
    const r = gufo(['quantize', STORIES_260K, q8, '--type', 'Q8_0'], { ...isolatedEnv(tempDir()), GUFO_HOME: home });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`stored in ${join(home, 'gufo.db')}`);

    const b = testBackend({ dataDir: home });
    const exported = (await b.api.listExports()).find((e) => e.outputPath === realpathSync(q8));
    expect(exported).toMatchObject({ status: 'done', fileType: 'Q8_0', sourcePath: realpathSync(STORIES_260K) });
    const job = await b.context.jobs.wait(await b.api.startTensorError(exported!.outputModelId!));
    expect(job.status, job.error ?? '').toBe('done');
    expect(job.result as TensorErrorComparison).toMatchObject({
      sourceModelId: exported!.sourceModelId,
      sourceName: 'stories260K',
    });
  });
});

describe('gufo quantize without GUFO_HOME', () => {
  it("records the export in the app's default data folder, ~/.config/Gufo, and leaves the file's bytes alone", async () => {
    const dir = tempDir();
    const home = join(dir, 'user');
    const env = { ...isolatedEnv(home), XDG_CONFIG_HOME: '' };
    const q8 = join(dir, 'stories-q8.gguf');
    const q8Again = join(dir, 'stories-q8-again.gguf');
    const r = gufo(['quantize', STORIES_260K, q8, '--type', 'Q8_0'], env);
    expect(r.status, r.stderr).toBe(0);
    // Where the app keeps its data when GUFO_HOME is unset (node/data-dir.ts), here in a scratch home.
    const appData = join(home, '.config', 'Gufo');
    expect(r.stderr).toContain(`stored in ${join(appData, 'gufo.db')}`);
    // The same bytes as a run that records nothing: what the app knows is kept outside the file.
    const plain = gufo(['quantize', STORIES_260K, q8Again, '--type', 'Q8_0'], {
      ...env,
      GUFO_HOME: join(dir, 'other-home'),
    });
    expect(plain.status, plain.stderr).toBe(0);
    expect(readFileSync(q8).equals(readFileSync(q8Again))).toBe(true);

    const b = testBackend({ dataDir: appData });
    const exported = (await b.api.listExports()).find((e) => e.outputPath === realpathSync(q8));
    expect(exported).toMatchObject({ status: 'done', fileType: 'Q8_0', sourcePath: realpathSync(STORIES_260K) });
    const job = await b.context.jobs.wait(await b.api.startTensorError(exported!.outputModelId!));
    expect(job.status, job.error ?? '').toBe('done');
    expect(job.result as TensorErrorComparison).toMatchObject({ sourceName: 'stories260K' });
  });

  it('with XDG_CONFIG_HOME set, records it in that folder, as the app does', () => {
    const dir = tempDir();
    const config = join(dir, 'xdg');
    const r = gufo(['quantize', STORIES_260K, join(dir, 'q8.gguf'), '--type', 'Q8_0'], {
      ...isolatedEnv(join(dir, 'user')),
      XDG_CONFIG_HOME: config,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`stored in ${join(config, 'Gufo', 'gufo.db')}`);
  });
});
