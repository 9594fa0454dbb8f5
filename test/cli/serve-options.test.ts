/** `gufo serve`'s options are checked before anything starts: a bad one exits non-zero with a message naming it. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_KEY_CHARS } from '../../src-preload/api';
import { isolatedEnv } from '../support/backend';
import { gufo } from '../support/cli';
import { tempDir } from '../support/temp';

describe('gufo serve --api-key', () => {
  it(`refuses a key shorter than ${API_KEY_CHARS.min} characters before serving anything`, () => {
    const home = tempDir();
    // Were the key taken, the server would run until the timeout: status null.
    const r = gufo(
      ['serve', '--port', '0', '--api-key', 'k'.repeat(API_KEY_CHARS.min - 1)],
      { ...isolatedEnv(home), GUFO_HOME: join(home, 'gufo-data') },
      30_000,
    );
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      `--api-key must be null (no key) or ${API_KEY_CHARS.min} to ${API_KEY_CHARS.max} printable characters`,
    );
    expect(r.stdout).not.toContain('Gufo is running at');
  });
});

describe('gufo serve --origins', () => {
  it('refuses an entry that is not an origin before serving anything', () => {
    const home = tempDir();
    const r = gufo(
      ['serve', '--port', '0', '--origins', 'https://app.example.com,app.example.com'],
      { ...isolatedEnv(home), GUFO_HOME: join(home, 'gufo-data') },
      30_000,
    );
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain('--origins must be a list of origins: "app.example.com" is not an origin');
    expect(r.stdout).not.toContain('Gufo is running at');
  });
});

describe('gufo serve --parallel', () => {
  it('refuses 0 and more than 64 slots before serving anything', () => {
    const home = tempDir();
    for (const [value, message] of [
      ['0', '--parallel must be between 1 and 64, got 0'],
      ['65', '--parallel must be between 1 and 64, got 65'],
      ['two', '--parallel must be a non-negative integer, got "two"'],
    ]) {
      const r = gufo(
        ['serve', '--port', '0', '--parallel', value!],
        { ...isolatedEnv(home), GUFO_HOME: join(home, 'gufo-data') },
        30_000,
      );
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain(message);
      expect(r.stdout).not.toContain('Gufo is running at');
    }
  });
});
