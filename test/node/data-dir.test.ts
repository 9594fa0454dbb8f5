import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataDir, envModelDirs } from '../../src-main/node/data-dir';

describe('data dir', () => {
  it('is GUFO_HOME when set', () => {
    expect(dataDir({ GUFO_HOME: 'rel/home' }, 'linux')).toBe(resolve('rel/home'));
  });

  it('is the OS user-data folder Electron uses for an app named Gufo', () => {
    expect(dataDir({}, 'linux')).toBe(join(homedir(), '.config', 'Gufo'));
    expect(dataDir({ XDG_CONFIG_HOME: '/xdg' }, 'linux')).toBe(join('/xdg', 'Gufo'));
    // Blank is unset, as the XDG spec says (not a folder relative to where gufo runs).
    expect(dataDir({ XDG_CONFIG_HOME: '' }, 'linux')).toBe(join(homedir(), '.config', 'Gufo'));
    expect(dataDir({}, 'darwin')).toBe(join(homedir(), 'Library', 'Application Support', 'Gufo'));
    expect(dataDir({ APPDATA: '/appdata' }, 'win32')).toBe(join('/appdata', 'Gufo'));
  });

  it('reads GUFO_MODELS_DIRS with the OS path delimiter, skipping empty entries', () => {
    expect(envModelDirs({ GUFO_MODELS_DIRS: ['/a', '', 'b'].join(delimiter) })).toEqual(['/a', resolve('b')]);
    expect(envModelDirs({})).toEqual([]);
  });
});
