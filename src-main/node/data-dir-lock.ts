/**
 * Which back end owns a data folder. The app, `gufo serve` and short CLI commands may open the same
 * folder at once; only the first, the owner, may treat leftovers as a crash's (answers still
 * 'streaming', exports still 'running') and start listeners. The lock is a file holding the
 * owner's pid and, on Linux, its start time (`<pid> <ticks since boot>`; older Gufos wrote the pid
 * alone). One whose process is gone, a zombie, or a process that started at another time (the
 * pid was reused) is stale and taken over.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface DataDirLock {
  /** Whether this process owns the folder. */
  owner: boolean;
  /** Gives the folder up (only the owner's lock file is removed). */
  release(): void;
}

/** A process's state letter and start time, from /proc/<pid>/stat; null where there is no /proc (or no such process). */
function procStat(pid: number): { state: string; startTicks: string } | null {
  try {
    // `<pid> (<comm>) <state> …`: comm may hold spaces and parentheses, so fields count from the last ')'.
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // Field 3 is the state, field 22 the start time.
    return { state: fields[0]!, startTicks: fields[19]! };
  } catch {
    return null;
  }
}

/** Whether a process with this id is running: it exists (signal 0 only checks) and is not a zombie. */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it runs, as another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = procStat(pid)?.state;
  // Z: exited, not yet reaped by its parent; X: dead.
  return state !== 'Z' && state !== 'X';
}

/** What this process writes in its lock file. */
function lockText(pid: number): string {
  const startTicks = procStat(pid)?.startTicks;
  return startTicks === undefined ? String(pid) : `${pid} ${startTicks}`;
}

/** Whether the lock file's text names a running process other than this one. */
function heldByAnother(text: string): boolean {
  const [pidText, startTicks] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || !isProcessRunning(pid)) return false;
  // A pid-only lock (older Gufo, no /proc) cannot tell a reused pid apart: it counts as held.
  const now = procStat(pid)?.startTicks;
  return startTicks === undefined || now === undefined || now === startTicks;
}

export function lockDataDir(dir: string): DataDirLock {
  const path = join(dir, 'gufo.lock');
  const text = lockText(process.pid);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, text);
      closeSync(fd);
      let released = false;
      return {
        owner: true,
        release: () => {
          if (released) return;
          released = true;
          try {
            if (readFileSync(path, 'utf8') === text) unlinkSync(path);
          } catch {
            // Already gone.
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (heldByAnother(readFileSync(path, 'utf8'))) break;
      // A crashed owner's lock (or an unreadable one): take it over.
      unlinkSync(path);
    }
  }
  return { owner: false, release: () => {} };
}
