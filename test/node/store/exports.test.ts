import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/node/store/database';
import { ExportStore } from '../../../src-main/node/store/exports';
import { ModelStore } from '../../../src-main/node/store/models';
import { tempDir } from '../../support/temp';

function store() {
  const { db } = openStore(join(tempDir(), 'gufo.db'));
  const models = new ModelStore(db);
  const source = models.upsert({
    path: '/m/src.gguf',
    name: 'src',
    source: 'added',
    bytes: 10,
    mtimeMs: 1,
    summary: null,
    error: null,
  });
  const output = models.upsert({
    path: '/m/src-Q8_0.gguf',
    name: 'src',
    source: 'exported',
    bytes: 5,
    mtimeMs: 1,
    summary: null,
    error: null,
  });
  return { db, exports: new ExportStore(db), models, source, output };
}

const request = (sourceModelId: number, fileType = 'Q8_0') => ({
  sourceModelId,
  sourceName: 'src',
  sourcePath: '/m/src.gguf',
  outputPath: `/m/src-${fileType}.gguf`,
  fileType,
});

describe('ExportStore', () => {
  it('records a running export, then how it ended', () => {
    const { db, exports, source, output } = store();
    const started = exports.start(request(source.id));
    expect(started).toMatchObject({
      ...request(source.id),
      status: 'running',
      bytesOut: null,
      seconds: null,
      error: null,
      outputModelId: null,
      jobId: null,
      endedAt: null,
    });
    exports.setJob(started.id, 'job-1');
    const done = exports.finish(started.id, { status: 'done', bytesOut: 5, seconds: 1.5, outputModelId: output.id });
    expect(done).toMatchObject({
      status: 'done',
      bytesOut: 5,
      seconds: 1.5,
      outputModelId: output.id,
      jobId: 'job-1',
      error: null,
    });
    expect(done.endedAt! >= done.startedAt).toBe(true);

    const failed = exports.finish(exports.start(request(source.id, 'Q4_0')).id, {
      status: 'failed',
      seconds: 0.2,
      error: '/m/src-Q4_0.gguf: disk on fire',
    });
    expect(failed).toMatchObject({
      status: 'failed',
      error: '/m/src-Q4_0.gguf: disk on fire',
      bytesOut: null,
      outputModelId: null,
    });
    const cancelled = exports.finish(exports.start(request(source.id, 'Q6_K')).id, {
      status: 'cancelled',
      seconds: 0.1,
      error: null,
    });
    expect(cancelled).toMatchObject({ status: 'cancelled', error: null });
    expect(exports.list().map((e) => e.fileType)).toEqual(['Q6_K', 'Q4_0', 'Q8_0']);
    db.close();
  });

  it('marks exports left running (the app was killed) as failed: interrupted', () => {
    const { db, exports, source } = store();
    const finished = exports.finish(exports.start(request(source.id)).id, {
      status: 'cancelled',
      seconds: 1,
      error: null,
    });
    const running = exports.start(request(source.id, 'Q4_0'));
    expect(exports.markInterrupted()).toHaveLength(1);
    expect(exports.get(running.id)).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^interrupted: .*\/m\/src-Q4_0\.gguf was not written$/) as string,
    });
    expect(exports.get(running.id)!.endedAt).not.toBeNull();
    expect(exports.get(finished.id)).toEqual(finished);
    db.close();
  });

  it('keeps the record when the source or output leaves the library', () => {
    const { db, exports, models, source, output } = store();
    const e = exports.finish(exports.start(request(source.id)).id, {
      status: 'done',
      bytesOut: 5,
      seconds: 1,
      outputModelId: output.id,
    });
    models.delete(source.id);
    models.delete(output.id);
    expect(exports.get(e.id)).toMatchObject({
      sourceModelId: null,
      outputModelId: null,
      sourcePath: '/m/src.gguf',
      status: 'done',
    });
    db.close();
  });
});
