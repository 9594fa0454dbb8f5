/**
 * Which back end owns a data folder. The app, `gufo serve` and short CLI commands may open the same
 * folder at once; only the first, the owner, may treat leftovers as a crash's (answers still
 * 'streaming', exports still 'running') and start listeners. The lock is a file holding the
 * owner's pid; one whose process is gone is stale and taken over.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface DataDirLock {
  /** Whether this process owns the folder. */
  owner: boolean;
  /** Gives the folder up (only the owner's lock file is removed). */
  release(): void;
}

export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockDataDir(dir: string): DataDirLock {
  const path = join(dir, 'gufo.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return {
        owner: true,
        release: () => {
          if (released) return;
          released = true;
          try {
            if (readFileSync(path, 'utf8') === String(process.pid)) unlinkSync(path);
          } catch {
            // Already gone.
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isSafeInteger(pid) && pid !== process.pid && isProcessRunning(pid)) break;
      // A crashed owner's lock (or an unreadable one): take it over.
      unlinkSync(path);
    }
  }
  return { owner: false, release: () => {} };
}
