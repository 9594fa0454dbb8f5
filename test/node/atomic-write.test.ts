/**
 * Publishing a written file without replacing one that appeared meanwhile. Hard links are real here;
 * a file system without them (FAT, some network and FUSE mounts) is the one boundary faked: while
 * `noLinks.enabled`, node:fs/promises' `link` fails with EPERM as Linux's vfat does.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileExistsError, removeStaleTemps, writeAtomically } from '../../src-main/node/atomic-write';
import { tempDir } from '../support/temp';

const noLinks = { enabled: false, calls: 0 };

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const link = async (...args: Parameters<typeof fs.link>): Promise<void> => {
    if (!noLinks.enabled) return fs.link(...args);
    noLinks.calls++;
    throw Object.assign(
      new Error(`EPERM: operation not permitted, link '${String(args[0])}' -> '${String(args[1])}'`),
      { code: 'EPERM', syscall: 'link' },
    );
  };
  return { ...fs, link, default: { ...fs, link } };
});

afterEach(() => {
  noLinks.enabled = false;
  noLinks.calls = 0;
});

/** A pid that no process has now: one of a child that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid;
}

/** Writes `path` without replacing, creating a file of the user's there in the middle of the write. */
async function writeWhileUserCreates(path: string): Promise<unknown> {
  return writeAtomically(
    path,
    async (put) => {
      await put(new TextEncoder().encode('ours, part 1'));
      writeFileSync(path, 'theirs');
      await put(new TextEncoder().encode(', part 2'));
    },
    { overwrite: false },
  ).catch((err: unknown) => err);
}

describe('writeAtomically without overwriting', () => {
  it('writes under a temporary name that carries the writer pid, then publishes the file', async () => {
    const dir = tempDir();
    const path = join(dir, 'model.gguf');
    const seen: string[] = [];
    await writeAtomically(
      path,
      async (put) => {
        seen.push(...readdirSync(dir));
        await put(new TextEncoder().encode('hello'));
      },
      { overwrite: false },
    );
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(new RegExp(`^\\.model\\.gguf\\.${process.pid}\\.[0-9a-f]{12}\\.tmp$`));
    expect(readdirSync(dir)).toEqual(['model.gguf']);
    expect(readFileSync(path, 'utf8')).toBe('hello');
    expect(statSync(path).nlink).toBe(1);
  });

  it('refuses a file that appeared at the path while writing, and removes its temporary file', async () => {
    const dir = tempDir();
    const path = join(dir, 'model.gguf');
    const err = await writeWhileUserCreates(path);
    expect(err).toBeInstanceOf(FileExistsError);
    expect((err as Error).message).toBe(`${path} already exists; not overwritten`);
    expect(readFileSync(path, 'utf8')).toBe('theirs');
    expect(readdirSync(dir)).toEqual(['model.gguf']);
  });

  it('where hard links are unsupported, reserves the name with an exclusive create instead', async () => {
    noLinks.enabled = true;
    const dir = tempDir();
    const path = join(dir, 'model.gguf');
    await writeAtomically(path, (put) => put(new TextEncoder().encode('hello')), { overwrite: false });
    expect(noLinks.calls).toBe(1);
    expect(readFileSync(path, 'utf8')).toBe('hello');
    expect(readdirSync(dir)).toEqual(['model.gguf']);

    const other = join(dir, 'other.gguf');
    const err = await writeWhileUserCreates(other);
    expect(noLinks.calls).toBe(2);
    expect((err as Error).message).toBe(`${other} already exists; not overwritten`);
    expect(readFileSync(other, 'utf8')).toBe('theirs');
    expect(readdirSync(dir).sort()).toEqual(['model.gguf', 'other.gguf']);
  });

  it('still replaces an existing file when asked to', async () => {
    const dir = tempDir();
    const path = join(dir, 'settings.json');
    writeFileSync(path, 'old');
    await writeAtomically(path, (put) => put(new TextEncoder().encode('new')));
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(readdirSync(dir)).toEqual(['settings.json']);
  });
});

describe('removeStaleTemps', () => {
  it('removes the temporary files of writers that are gone, and nothing else', async () => {
    const dir = tempDir();
    const files = {
      dead: `.model.gguf.${deadPid()}.0123456789ab.tmp`,
      deadOther: `.other.gguf.${deadPid()}.ba9876543210.tmp`,
      live: `.model.gguf.${process.pid}.0123456789ab.tmp`,
      notOurs: '.model.gguf.tmp',
      noPid: '.model.gguf.0123456789ab.tmp',
      model: 'model.gguf',
    };
    for (const name of Object.values(files)) writeFileSync(join(dir, name), 'x');
    await removeStaleTemps(dir);
    expect(readdirSync(dir).sort()).toEqual([files.live, files.noPid, files.notOurs, files.model].sort());
  });

  it('is quiet about a folder that does not exist', async () => {
    await expect(removeStaleTemps(join(tempDir(), 'missing'))).resolves.toBeUndefined();
  });
});
