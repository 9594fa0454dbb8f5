/**
 * A disk that fills up mid-export. The file system is the one boundary faked here: node:fs/promises'
 * `open` hands out real file handles, except that writes to an export's temporary file fail with
 * ENOSPC once it holds LIMIT bytes, as a full disk would.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { ExportRecord } from '../../src-preload/api';
import { readModelFile } from '../../src-main/node/model-file';
import { testBackend } from '../support/backend';
import { STORIES_260K } from '../support/paths';

const LIMIT = 200_000;
const full = { enabled: false, bytesWritten: 0 };

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const open = async (...args: Parameters<typeof fs.open>): Promise<FileHandle> => {
    const handle = await fs.open(...args);
    if (!full.enabled || !String(args[0]).endsWith('.tmp')) return handle;
    const write = handle.write.bind(handle) as (...a: unknown[]) => Promise<{ bytesWritten: number }>;
    return Object.assign(Object.create(handle) as FileHandle, {
      write: async (buffer: Uint8Array, offset: number, length: number, position: number) => {
        const room = LIMIT - full.bytesWritten;
        if (room <= 0)
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
            code: 'ENOSPC',
            errno: -28,
            syscall: 'write',
          });
        const r = await write(buffer, offset, Math.min(length, room), position);
        full.bytesWritten += r.bytesWritten;
        return r;
      },
    });
  };
  return { ...fs, open, default: { ...fs, open } };
});

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('export to a full disk', () => {
  it('fails with a clear error, leaves no partial file and the source untouched', async () => {
    const b = testBackend();
    const modelId = b.context.models.upsert(readModelFile(STORIES_260K, 'added')).id;
    const before = sha256(STORIES_260K);
    full.enabled = true;
    const job = await b.context.jobs.wait(await b.api.startExport({ modelId, fileType: 'F16' }));
    full.enabled = false;
    expect(full.bytesWritten).toBe(LIMIT); // the disk really filled up mid-file
    const out = join(b.context.modelsDir, 'stories260K-F16.gguf');
    const message = `Not enough disk space to write ${out} (the export needs `;
    expect(job.status).toBe('failed');
    expect(job.error).toContain(message);
    expect(job.error).toMatch(
      /Nothing was written and .*stories260K\.gguf is untouched: free some space or export to another folder\.$/,
    );
    const [record] = await b.api.listExports();
    expect(record).toMatchObject<Partial<ExportRecord>>({
      status: 'failed',
      error: job.error,
      outputModelId: null,
      bytesOut: null,
    });
    expect(readdirSync(b.context.modelsDir)).toEqual([]);
    expect(sha256(STORIES_260K)).toBe(before);
    expect(b.context.models.byPath(out)).toBeUndefined();
  });
});
