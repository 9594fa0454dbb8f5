import { randomBytes } from 'node:crypto';
import { link, open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isProcessRunning } from './data-dir-lock';

/** Appends bytes to the file being written; returns once they are written. */
export type Put = (bytes: Uint8Array) => Promise<void>;

export interface WriteAtomicallyOptions {
  /**
   * Whether an existing `path` is replaced (the default, for files Gufo owns such as settings).
   * When false, a file at `path`, including one that appears while writing, is never replaced:
   * the write fails with FileExistsError.
   */
  overwrite?: boolean;
}

/** A write that must not overwrite found a file at its path. */
export class FileExistsError extends Error {
  constructor(readonly path: string) {
    super(`${path} already exists; not overwritten`);
  }
}

/**
 * Writes `path` all or nothing: `write` fills a temporary file beside it, which is synced and
 * put in place only when `write` succeeds. On any error (a full disk, a cancel, a crash of the
 * producer) the temporary file is removed and an existing `path` is left as it was.
 */
export async function writeAtomically(
  path: string,
  write: (put: Put) => Promise<void>,
  options: WriteAtomicallyOptions = {},
): Promise<void> {
  const temp = tempPathFor(path);
  const handle = await open(temp, 'wx').catch((err: unknown) => {
    throw namingTarget(err, temp, path);
  });
  try {
    let position = 0;
    await write(async (bytes) => {
      for (let done = 0; done < bytes.byteLength;) {
        const { bytesWritten } = await handle.write(bytes, done, bytes.byteLength - done, position);
        done += bytesWritten;
        position += bytesWritten;
      }
    });
    await handle.datasync();
    await handle.close();
    if (options.overwrite === false) await publishWithoutOverwrite(temp, path);
    else await rename(temp, path);
  } catch (err) {
    await handle.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw namingTarget(err, temp, path);
  }
}

/** A file error about the temporary file names the file being written instead (the one the user knows). */
function namingTarget(err: unknown, temp: string, path: string): unknown {
  const e = err as NodeJS.ErrnoException | undefined;
  if (e && typeof e === 'object' && e.path === temp) e.path = path;
  return err;
}

/** What link() fails with on file systems without hard links (vfat: EPERM; exFAT, some FUSE and network mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/**
 * Gives the finished `temp` the name `path` unless something is there. rename() would replace it,
 * and Node has no renameat2(RENAME_NOREPLACE); link() fails with EEXIST instead, atomically, so a
 * file created at `path` at any moment is kept. Where hard links are unsupported, an exclusive
 * create reserves the name and the rename goes over that placeholder: only a writer that opens
 * our empty placeholder (creating a file there fails) in the instant before the rename can lose
 * its bytes.
 */
async function publishWithoutOverwrite(temp: string, path: string): Promise<void> {
  try {
    await link(temp, path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') throw new FileExistsError(path);
    if (!NO_HARD_LINKS.has(code)) throw err;
    await reserveName(path);
    await rename(temp, path).catch(async (renameErr: unknown) => {
      await unlink(path).catch(() => {});
      throw renameErr;
    });
    return;
  }
  // Published under both names; the temporary one goes (if that fails, the next run removes it as stale).
  await unlink(temp).catch(() => {});
}

/** Creates `path` empty, failing with FileExistsError when anything (even a dangling symlink) is there. */
async function reserveName(path: string): Promise<void> {
  try {
    await (await open(path, 'wx')).close();
  } catch (err) {
    throw (err as NodeJS.ErrnoException).code === 'EEXIST' ? new FileExistsError(path) : err;
  }
}

/**
 * A temporary file for `path`: `.<name>.<pid>.<random>.tmp`, hidden, and naming the process
 * writing it, so that one left by a killed process can be told from one still being written.
 */
function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

const TEMP_NAME = /^\..+\.(\d+)\.[0-9a-f]{12}\.tmp$/;

/**
 * Removes the temporary files in `dir` whose writer is gone (killed, crashed: a dying process
 * never reaches its clean-up). One whose pid now belongs to another process stays until a later
 * run; one of another user's running process counts as running. Pids are per machine: a folder
 * shared with another machine or PID namespace could lose a file being written there.
 */
export async function removeStaleTemps(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = Number(TEMP_NAME.exec(name)?.[1] ?? Number.NaN);
    if (Number.isSafeInteger(pid) && pid !== process.pid && !isProcessRunning(pid)) {
      await unlink(join(dir, name)).catch(() => {});
    }
  }
}
