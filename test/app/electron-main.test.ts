import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MenuItemConstructorOptions } from 'electron';
import { version } from '../../package.json';
import { STORIES_260K } from '../support/paths';
import { appListener, FakeWebContents, type FakeWindow, type IpcHandler } from './fake-electron';

const electron = await vi.hoisted(async () => (await import('./fake-electron')).fakeElectron());
vi.mock('electron', () => electron);

const home = mkdtempSync(join(tmpdir(), 'gufo-electron-'));
const stateFile = join(home, 'window-state.json');
let win: FakeWindow;

beforeAll(async () => {
  delete process.env.ELECTRON_RENDERER_URL;
  process.env.GUFO_HOME = home;
  // Where the user left the window last time: on the one display, maximized.
  writeFileSync(stateFile, JSON.stringify({ x: 100, y: 50, width: 1000, height: 700, maximized: true }));
  await import('../../src-main/app/index');
  await vi.waitFor(() => expect(electron.windows).toHaveLength(1));
  win = electron.windows[0]!;
});

afterAll(() => {
  delete process.env.GUFO_HOME;
  rmSync(home, { recursive: true, force: true });
});

/** The handler the app registered for IPC channel `gufo:<method>`. */
function ipcHandler(method: string): IpcHandler {
  const call = electron.ipcMain.handle.mock.calls.find(([channel]) => channel === `gufo:${method}`);
  if (!call) throw new Error(`no handler for gufo:${method}`);
  return call[1];
}
const fromWindow = () => ({ sender: win.webContents });

function menuItem(menu: string, label: string): MenuItemConstructorOptions {
  const template = electron.Menu.setApplicationMenu.mock.calls.at(-1)![0].template as MenuItemConstructorOptions[];
  const submenu = template.find((m) => m.label === menu || m.role === menu.toLowerCase())
    ?.submenu as MenuItemConstructorOptions[];
  const item = submenu?.find((i) => i.label === label);
  if (!item) throw new Error(`no ${menu} › ${label} in the menu`);
  return item;
}
const click = (item: MenuItemConstructorOptions) => (item.click as () => void)();

describe('Electron main process', () => {
  it('keeps its data, and the single-instance lock, in GUFO_HOME', () => {
    expect(electron.app.setName).toHaveBeenCalledWith('Gufo');
    expect(electron.app.setPath).toHaveBeenCalledWith('userData', home);
    const setPath = electron.app.setPath.mock.invocationCallOrder[0]!;
    expect(setPath).toBeLessThan(electron.app.requestSingleInstanceLock.mock.invocationCallOrder[0]!);
    expect(electron.app.enableSandbox).toHaveBeenCalled();
  });

  it('focuses the running window when Gufo is launched again', () => {
    appListener(electron, 'second-instance')();
    expect(win.focus).toHaveBeenCalled();
  });

  it('creates the window with isolated, sandboxed, Node-free web preferences', () => {
    const { webPreferences } = win.options;
    expect(webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webviewTag: false,
    });
    expect(webPreferences?.preload).toMatch(/preload[/\\]index\.cjs$/);
  });

  it('loads the built renderer', () => {
    expect(win.loadURL).toHaveBeenCalledWith(expect.stringMatching(/^file:\/\/.*\/renderer\/index\.html$/));
  });

  it('restores the saved size and position, maximized once shown', () => {
    expect(win.options).toMatchObject({ x: 100, y: 50, width: 1000, height: 700 });
    expect(win.maximize).not.toHaveBeenCalled();
    win.emit('ready-to-show');
    expect(win.maximize).toHaveBeenCalled();
    expect(win.show).toHaveBeenCalled();
  });

  it('saves the window state after a move settles, and at once on close', async () => {
    win.maximized = false;
    win.moveTo({ x: 300, y: 200 });
    // Debounced: nothing yet.
    expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toMatchObject({ x: 100 });
    await vi.waitFor(
      () =>
        expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toEqual({
          x: 300,
          y: 200,
          width: 1000,
          height: 700,
          maximized: false,
        }),
      {
        timeout: 3000,
      },
    );
    win.bounds = { x: 10, y: 20, width: 900, height: 600 };
    win.maximized = true;
    win.emit('close');
    await vi.waitFor(
      () =>
        expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toEqual({
          x: 10,
          y: 20,
          width: 900,
          height: 600,
          maximized: true,
        }),
      {
        timeout: 500,
      },
    );
  });

  describe('every web contents', () => {
    const contents = new FakeWebContents();
    beforeAll(() => appListener(electron, 'web-contents-created')({}, contents));

    it('stays on the app page, sending web links to the system browser', () => {
      electron.shell.openExternal.mockClear();
      const page = win.loadURL.mock.calls[0]![0];
      expect(contents.attempt('will-navigate', { url: `${page}#/settings` })).toBe(false);
      for (const url of [
        'https://example.com/',
        'file:///etc/passwd',
        'javascript:alert(1)',
        `${page.replace('index.html', 'other.html')}`,
      ]) {
        expect(contents.attempt('will-navigate', { url }), url).toBe(true);
      }
      expect(electron.shell.openExternal.mock.calls).toEqual([['https://example.com/']]);
    });

    it('denies window.open, sending web links to the system browser', () => {
      electron.shell.openExternal.mockClear();
      expect(contents.windowOpenHandler!({ url: 'https://example.org/' })).toEqual({ action: 'deny' });
      expect(contents.windowOpenHandler!({ url: 'smb://host/share' })).toEqual({ action: 'deny' });
      expect(electron.shell.openExternal.mock.calls).toEqual([['https://example.org/']]);
    });

    it('refuses to attach a <webview>', () => {
      expect(contents.attempt('will-attach-webview')).toBe(true);
    });
  });

  it('refuses every permission but writing to the clipboard from the app page', () => {
    const { request, check } = electron.permissions;
    const asked = (contents: FakeWebContents, permission: string) => {
      const callback = vi.fn();
      request!(contents, permission, callback, {});
      return callback.mock.calls[0]![0] as boolean;
    };
    const page = win.webContents;
    const stranger = Object.assign(new FakeWebContents(), { url: 'https://example.com/' });
    for (const permission of [
      'media',
      'geolocation',
      'notifications',
      'clipboard-read',
      'openExternal',
      'fullscreen',
    ]) {
      expect(asked(page, permission), permission).toBe(false);
      expect(check!(page, permission, 'file://'), permission).toBe(false);
    }
    expect(asked(page, 'clipboard-sanitized-write')).toBe(true);
    expect(check!(page, 'clipboard-sanitized-write', 'file://')).toBe(true);
    expect(asked(stranger, 'clipboard-sanitized-write')).toBe(false);
    expect(check!(stranger, 'clipboard-sanitized-write', 'https://example.com')).toBe(false);
    expect(check!(null, 'clipboard-sanitized-write', '')).toBe(false);
  });

  it('answers GufoApi calls from the main window only', async () => {
    const handler = ipcHandler('appInfo');
    expect(await handler(fromWindow())).toMatchObject({
      name: 'Gufo',
      version,
      mode: 'electron',
      platform: process.platform,
      dataDir: home,
    });
    expect(() => handler({ sender: new FakeWebContents() })).toThrow(/gufo:appInfo called from an unknown page/);
  });

  it('forwards back-end events to the window', async () => {
    win.webContents.send.mockClear();
    const settings = await ipcHandler('updateSettings')(fromWindow(), { defaultContext: 4096 });
    expect(win.webContents.send).toHaveBeenCalledWith('gufo:event', { type: 'settings-changed', settings });
  });

  it('gives native menus and dialogs the theme chosen in Settings', async () => {
    expect(electron.nativeTheme.themeSource).toBe('system');
    await ipcHandler('updateSettings')(fromWindow(), { theme: 'dark' });
    expect(electron.nativeTheme.themeSource).toBe('dark');
    await ipcHandler('updateSettings')(fromWindow(), { theme: 'system' });
    expect(electron.nativeTheme.themeSource).toBe('system');
  });

  it('answers pickPaths with the native open dialog, over the window', async () => {
    electron.dialog.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: ['/models'] });
    expect(await ipcHandler('pickPaths')(fromWindow(), 'folder')).toEqual(['/models']);
    expect(electron.dialog.showOpenDialog).toHaveBeenLastCalledWith(
      win,
      expect.objectContaining({ properties: ['openDirectory'] }),
    );
    expect(await ipcHandler('pickPaths')(fromWindow(), 'files')).toEqual([]);
    expect(electron.dialog.showOpenDialog).toHaveBeenLastCalledWith(
      win,
      expect.objectContaining({
        properties: ['openFile', 'multiSelections'],
        filters: [{ name: 'GGUF models', extensions: ['gguf'] }],
      }),
    );
  });

  describe('the app menu', () => {
    it('has File, Edit, View (with developer tools, unpackaged), Window and Help', () => {
      const template = electron.Menu.setApplicationMenu.mock.calls.at(-1)![0].template as MenuItemConstructorOptions[];
      expect(template.map((m) => m.label ?? m.role)).toEqual(
        process.platform === 'darwin'
          ? ['Gufo', 'File', 'Edit', 'View', 'windowMenu', 'help']
          : ['File', 'Edit', 'View', 'windowMenu', 'help'],
      );
      expect(
        (template.find((m) => m.label === 'View')!.submenu as MenuItemConstructorOptions[]).map((i) => i.role),
      ).toContain('toggleDevTools');
    });

    it('File › Add Models… adds the files picked to the library, and says which were not added', async () => {
      const notGguf = join(home, 'notes.gguf');
      writeFileSync(notGguf, 'not a model');
      const model = join(home, 'stories.gguf');
      copyFileSync(STORIES_260K, model);
      electron.dialog.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: [model, notGguf] });
      click(menuItem('File', 'Add Models…'));
      await vi.waitFor(() => expect(electron.dialog.showMessageBox).toHaveBeenCalled());
      const [parent, box] = electron.dialog.showMessageBox.mock.calls[0] as unknown as [
        unknown,
        { message: string; detail: string },
      ];
      expect(parent).toBe(win);
      expect(box.message).toBe('One file was not added.');
      expect(box.detail).toContain(`${notGguf}: `);
      // The file that is not a model is listed with its reason, as a broken file in a folder is (not as a model).
      const models = (await ipcHandler('listModels')(fromWindow())) as { path: string; error: string | null }[];
      expect(models.filter((m) => !m.error).map((m) => m.path)).toEqual([model]);
      expect(models.filter((m) => m.error).map((m) => m.path)).toEqual([notGguf]);
    });

    it('File › Open Data Folder opens the data folder; a failure is shown', async () => {
      click(menuItem('File', 'Open Data Folder'));
      expect(electron.shell.openPath).toHaveBeenCalledWith(home);
      electron.shell.openPath.mockResolvedValueOnce('no file manager');
      click(menuItem('Help', 'Open Data Folder'));
      await vi.waitFor(() =>
        expect(electron.dialog.showErrorBox).toHaveBeenCalledWith(
          'Could not open the data folder',
          `${home}: no file manager`,
        ),
      );
    });

    it('About Gufo shows the version and the data folder', async () => {
      electron.dialog.showMessageBox.mockClear();
      click(menuItem(process.platform === 'darwin' ? 'Gufo' : 'Help', 'About Gufo'));
      await vi.waitFor(() => expect(electron.dialog.showMessageBox).toHaveBeenCalled());
      const [, box] = electron.dialog.showMessageBox.mock.calls[0] as unknown as [
        unknown,
        { message: string; detail: string },
      ];
      expect(box.message).toBe(`Gufo ${version}`);
      expect(box.detail).toContain(`Data folder: ${home}`);
    });
  });

  it('closes the back end before quitting, without ever starting an engine', async () => {
    const willQuit = appListener(electron, 'will-quit');
    electron.app.quit.mockClear();
    const preventDefault = vi.fn();
    willQuit({ preventDefault });
    expect(preventDefault).toHaveBeenCalled();
    await vi.waitFor(() => expect(electron.app.quit).toHaveBeenCalled());
    await expect(ipcHandler('listModels')(fromWindow())).rejects.toThrow();
    // The second will-quit (from that quit) lets the app go.
    const again = vi.fn();
    willQuit({ preventDefault: again });
    expect(again).not.toHaveBeenCalled();
    expect(electron.utilityProcess.fork).not.toHaveBeenCalled();
  });
});
