/**
 * `gufo quantize` with GUFO_HOME records its output as an export of its input, as the app records
 * its own: the app's inspector then knows what the file was made from.
 */
import { realpathSync } from 'node:fs';
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
