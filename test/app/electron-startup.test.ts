import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBackend } from '../../src-main/backend/index';
import { tempDir } from '../support/temp';
import { appListener, fakeElectron, type FakeElectron } from './fake-electron';

/** Starts the main process afresh over a fake Electron, with GUFO_HOME = `home`. */
async function launch(home: string, setup: (electron: FakeElectron) => void = () => {}): Promise<FakeElectron> {
  vi.resetModules();
  const electron = fakeElectron();
  setup(electron);
  vi.doMock('electron', () => electron);
  process.env.GUFO_HOME = home;
  await import('../../src-main/app/index');
  return electron;
}

afterEach(() => {
  delete process.env.GUFO_HOME;
});

describe('Electron main process at startup', () => {
  it('quits at once when another Gufo holds the single-instance lock', async () => {
    const electron = await launch(tempDir(), (e) => e.app.requestSingleInstanceLock.mockReturnValue(false));
    expect(electron.app.quit).toHaveBeenCalled();
    expect(electron.app.whenReady).not.toHaveBeenCalled();
    expect(electron.windows).toEqual([]);
  });

  it('opens the window, with native menus and dialogs in the saved theme', async () => {
    const home = tempDir();
    const before = createBackend({ mode: 'electron', dataDir: home });
    await before.api.updateSettings({ theme: 'dark' });
    await before.close();
    const electron = await launch(home);
    await vi.waitFor(() => expect(electron.windows).toHaveLength(1));
    expect(electron.nativeTheme.themeSource).toBe('dark');
    expect(electron.dialog.showErrorBox).not.toHaveBeenCalled();
    appListener(electron, 'will-quit')({ preventDefault() {} });
    // Closed before the temporary data folder is removed.
    await vi.waitFor(() => expect(electron.app.quit).toHaveBeenCalled());
  });

  it('shows why and quits when the database is from a newer Gufo, leaving it untouched', async () => {
    const home = tempDir();
    const path = join(home, 'gufo.db');
    const db = new Database(path);
    db.exec('CREATE TABLE future (x)');
    db.pragma('user_version = 99');
    db.close();
    const before = readFileSync(path);
    const electron = await launch(home);
    await vi.waitFor(() => expect(electron.app.exit).toHaveBeenCalledWith(1));
    expect(electron.dialog.showErrorBox).toHaveBeenCalledWith(
      'Gufo cannot start',
      expect.stringContaining(`${path} was written by a newer Gufo (database version 99`),
    );
    expect(readFileSync(path)).toEqual(before);
    expect(electron.windows).toEqual([]);
    expect(electron.ipcMain.handle).not.toHaveBeenCalled();
  });

  it('shows why and quits when another process has the database locked', async () => {
    const home = tempDir();
    const path = join(home, 'gufo.db');
    const holder = new Database(path);
    holder.exec('CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)');
    try {
      const electron = await launch(home);
      await vi.waitFor(() => expect(electron.app.exit).toHaveBeenCalledWith(1), { timeout: 15_000 });
      expect(electron.dialog.showErrorBox).toHaveBeenCalledWith(
        'Gufo cannot start',
        expect.stringContaining(`${path} is locked by another process`),
      );
      expect(electron.windows).toEqual([]);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  });
});
