import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDataDir } from '../../src-main/node/data-dir-lock';
import { testBackend } from '../support/backend';
import { tempDir } from '../support/temp';

/** A live process other than this one, ended when the test is done with it. */
function otherProcess() {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  return {
    pid: child.pid!,
    stop: () => new Promise<void>((resolve) => child.once('exit', () => resolve()).kill('SIGKILL')),
  };
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
const startTicks = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1)!.split(' ')[19]!;
const stateOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1)!.split(' ')[0];

/**
 * A zombie: sh starts `sleep 0` in the background, then becomes `cat`, which never reaps its
 * child; the child's pid stays in the process table, dead, until `cat` ends: when stopped, or when
 * this process ends and closes its input (no time limit that a slow machine could run out of).
 */
async function zombieProcess() {
  const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec cat'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const [line] = (await once(parent.stdout, 'data')) as [Buffer];
  const pid = Number(line.toString().trim());
  while (stateOf(pid) !== 'Z') await new Promise((resolve) => setTimeout(resolve, 10));
  return { pid, stop: () => new Promise<void>((resolve) => parent.once('exit', () => resolve()).kill('SIGKILL')) };
}

describe('data folder lock', () => {
  it('makes the first back end the owner, and gives the folder up on release', () => {
    const dir = tempDir();
    const lock = lockDataDir(dir);
    expect(lock.owner).toBe(true);
    expect(readFileSync(join(dir, 'gufo.lock'), 'utf8')).toBe(`${process.pid} ${startTicks(process.pid)}`);
    lock.release();
    expect(existsSync(join(dir, 'gufo.lock'))).toBe(false);
  });

  it('leaves a folder owned by a running process to it, and takes over once it is gone', async () => {
    const dir = tempDir();
    const other = otherProcess();
    writeFileSync(join(dir, 'gufo.lock'), String(other.pid));
    const second = lockDataDir(dir);
    expect(second.owner).toBe(false);
    second.release();
    expect(readFileSync(join(dir, 'gufo.lock'), 'utf8')).toBe(String(other.pid));

    await other.stop(); // it crashed: its lock is stale
    expect(lockDataDir(dir).owner).toBe(true);
  });

  it('keeps a lock whose owner runs with the start time it recorded', async () => {
    const dir = tempDir();
    const other = otherProcess();
    writeFileSync(join(dir, 'gufo.lock'), `${other.pid} ${startTicks(other.pid)}`);
    expect(lockDataDir(dir).owner).toBe(false);
    await other.stop();
  });

  it('takes over a lock whose pid now belongs to another process (another start time)', async () => {
    const dir = tempDir();
    const other = otherProcess();
    writeFileSync(join(dir, 'gufo.lock'), `${other.pid} ${Number(startTicks(other.pid)) - 1}`);
    const lock = lockDataDir(dir);
    expect(lock.owner).toBe(true);
    expect(readFileSync(join(dir, 'gufo.lock'), 'utf8')).toBe(`${process.pid} ${startTicks(process.pid)}`);
    lock.release();
    await other.stop();
  });

  it('takes over a lock whose owner is a zombie (dead, not yet reaped)', async () => {
    const dir = tempDir();
    const zombie = await zombieProcess();
    writeFileSync(join(dir, 'gufo.lock'), String(zombie.pid));
    expect(lockDataDir(dir).owner).toBe(true);
    await zombie.stop();
  });

  it("a second back end leaves the owner's answer that is still streaming alone", async () => {
    const dataDir = join(tempDir(), 'home');
    const first = testBackend({ dataDir });
    first.context.db
      .prepare(
        "INSERT INTO chats (id, title, model_name, model_path, sampling_json, context_size) VALUES (1, 't', 'm', '/m', '{}', 512)",
      )
      .run();
    first.context.db
      .prepare(
        "INSERT INTO messages (id, chat_id, role, content, status) VALUES (1, 1, 'assistant', 'Once', 'streaming')",
      )
      .run();
    await first.close();

    // The owner is another, running process (the app, mid-answer): the CLI's back end must not interfere.
    const other = otherProcess();
    writeFileSync(join(dataDir, 'gufo.lock'), String(other.pid));
    const second = testBackend({ dataDir });
    expect(second.context.owner).toBe(false);
    const status = () => second.context.db.prepare('SELECT status FROM messages WHERE id = 1').pluck().get();
    expect(status()).toBe('streaming');
    await second.close();
    await other.stop();

    // Once the owner is gone, the next back end owns the folder and finds the answer interrupted.
    const third = testBackend({ dataDir });
    expect(third.context.owner).toBe(true);
    expect(third.context.db.prepare('SELECT status, content FROM messages WHERE id = 1').get()).toEqual({
      status: 'interrupted',
      content: 'Once',
    });
  });
});
