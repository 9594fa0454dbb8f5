/**
 * `gufo quantize IN OUT` never overwrites a user's file by surprise: like `cp -n` it refuses an
 * existing OUT unless --force, refuses OUT that is IN itself always, and clears the temporary files
 * that killed runs left in the output folder. Tests run as root too, where permission bits stop
 * nothing: they check bytes and modes, not EACCES.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  linkSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openGguf } from '../../src-main/node/gguf-io';
import { gufo } from '../support/cli';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const modeOf = (path: string) => statSync(path).mode & 0o777;

/** A pid that no process has now: one of a child that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid;
}

/** A user's read-only file at `path`. */
function readOnlyFile(path: string): void {
  writeFileSync(path, 'my notes, not a model');
  chmodSync(path, 0o444);
}

describe('gufo quantize output', () => {
  it('refuses an existing output file and leaves it as it was', () => {
    const dir = tempDir();
    const out = join(dir, 'out.gguf');
    readOnlyFile(out);
    const r = gufo(['quantize', STORIES_260K, out, '--type', 'Q8_0']);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(`gufo: ${out} already exists; not overwritten (pass --force to replace it)`);
    expect(readFileSync(out, 'utf8')).toBe('my notes, not a model');
    expect(modeOf(out)).toBe(0o444);
    expect(readdirSync(dir)).toEqual(['out.gguf']);
  });

  it('refuses to write over its input, by the same name, a hard link or a symlink, even with --force', () => {
    const dir = tempDir();
    const input = join(dir, 'in.gguf');
    copyFileSync(STORIES_260K, input);
    linkSync(input, join(dir, 'hard.gguf'));
    symlinkSync(input, join(dir, 'soft.gguf'));
    const before = sha256(input);
    for (const out of [input, join(dir, 'hard.gguf'), join(dir, 'soft.gguf')]) {
      for (const force of [[], ['--force']]) {
        const r = gufo(['quantize', input, out, '--type', 'Q8_0', ...force]);
        expect(r.status, `${out} ${force.join('')}`).toBe(1);
        expect(r.stderr.trim()).toBe(`gufo: ${out} is the input file ${input}; write the output to another file`);
      }
    }
    expect(sha256(input)).toBe(before);
    expect(statSync(input).nlink).toBe(2);
    expect(readdirSync(dir).sort()).toEqual(['hard.gguf', 'in.gguf', 'soft.gguf']);
  });

  it('--force replaces an existing output by renaming the new file over it, with default permissions', () => {
    const dir = tempDir();
    const out = join(dir, 'out.gguf');
    readOnlyFile(out);
    writeFileSync(join(dir, 'probe'), '');
    const fresh = modeOf(join(dir, 'probe'));
    const r = gufo(['quantize', STORIES_260K, out, '--type', 'Q8_0', '--force']);
    expect(r.status, r.stderr).toBe(0);
    const { gguf, file } = openGguf(out);
    expect(gguf.getNumber('general.file_type')).toBe(7);
    file.close();
    expect(modeOf(out)).toBe(fresh);
    expect(readdirSync(dir).sort()).toEqual(['out.gguf', 'probe']);
  });

  it('removes temporary files of killed runs in the output folder, not those of running ones', () => {
    const dir = tempDir();
    const stale = [`.out.gguf.${deadPid()}.0123456789ab.tmp`, `.earlier.gguf.${deadPid()}.ba9876543210.tmp`];
    // This test's own process is running: as another gufo still writing would be.
    const live = `.other.gguf.${process.pid}.0123456789ab.tmp`;
    for (const name of [...stale, live]) writeFileSync(join(dir, name), 'partial');
    const r = gufo(['quantize', STORIES_260K, join(dir, 'out.gguf'), '--type', 'Q8_0']);
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual([live, 'out.gguf'].sort());
  });
});
