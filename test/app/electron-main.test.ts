import { beforeAll, describe, expect, it, vi } from 'vitest';

// A fake of the few Electron APIs the main process uses, recording what it was asked to do.
const electron = vi.hoisted(() => {
  type Listener = (...args: any[]) => unknown;
  const webContents = {
    listeners: new Map<string, Listener>(),
    windowOpenHandler: undefined as Listener | undefined,
    on(event: string, listener: Listener) {
      this.listeners.set(event, listener);
    },
    setWindowOpenHandler(handler: Listener) {
      this.windowOpenHandler = handler;
    },
  };
  const windows: { options: any }[] = [];
  class BrowserWindow {
    webContents = webContents;
    constructor(public options: any) {
      windows.push(this);
    }
    static getAllWindows = () => windows;
    once() {}
    show() {}
    loadFile = vi.fn(async () => {});
    loadURL = vi.fn(async () => {});
  }
  return {
    webContents,
    windows,
    BrowserWindow,
    app: {
      requestSingleInstanceLock: vi.fn(() => true),
      enableSandbox: vi.fn(),
      quit: vi.fn(),
      on: vi.fn(),
      whenReady: vi.fn(async () => {}),
    },
    ipcMain: { handle: vi.fn() },
    utilityProcess: { fork: vi.fn() },
    shell: { openExternal: vi.fn(async () => {}) },
  };
});

vi.mock('electron', () => electron);

beforeAll(async () => {
  delete process.env.ELECTRON_RENDERER_URL;
  await import('../../src-main/app/index');
  await vi.waitFor(() => expect(electron.windows).toHaveLength(1));
});

describe('Electron main process', () => {
  it('takes the single-instance lock and sandboxes every renderer', () => {
    expect(electron.app.requestSingleInstanceLock).toHaveBeenCalled();
    expect(electron.app.enableSandbox).toHaveBeenCalled();
  });

  it('creates the window with isolated, sandboxed, Node-free web preferences', () => {
    const { webPreferences } = electron.windows[0]!.options;
    expect(webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false });
    expect(webPreferences.preload).toMatch(/preload[/\\]index\.cjs$/);
  });

  it('loads the built renderer', () => {
    const win = electron.windows[0] as unknown as InstanceType<typeof electron.BrowserWindow>;
    expect(win.loadFile).toHaveBeenCalledWith(expect.stringMatching(/renderer[/\\]index\.html$/));
  });

  it('blocks navigation, sending web links to the system browser', () => {
    const willNavigate = electron.webContents.listeners.get('will-navigate')!;
    for (const url of ['https://example.com/', 'file:///etc/passwd', 'javascript:alert(1)']) {
      const preventDefault = vi.fn();
      willNavigate({ url, preventDefault });
      expect(preventDefault).toHaveBeenCalled();
    }
    expect(electron.shell.openExternal.mock.calls).toEqual([['https://example.com/']]);
  });

  it('denies window.open, sending web links to the system browser', () => {
    electron.shell.openExternal.mockClear();
    const open = electron.webContents.windowOpenHandler!;
    expect(open({ url: 'https://example.org/' })).toEqual({ action: 'deny' });
    expect(open({ url: 'smb://host/share' })).toEqual({ action: 'deny' });
    expect(electron.shell.openExternal.mock.calls).toEqual([['https://example.org/']]);
  });

  it('stops the engine before quitting', async () => {
    const willQuit = electron.app.on.mock.calls.find(([event]) => event === 'will-quit')![1] as (e: object) => void;
    electron.app.quit.mockClear();
    const preventDefault = vi.fn();
    willQuit({ preventDefault });
    expect(preventDefault).toHaveBeenCalled();
    await vi.waitFor(() => expect(electron.app.quit).toHaveBeenCalled());
    // The second will-quit (from that quit) lets the app go.
    const again = vi.fn();
    willQuit({ preventDefault: again });
    expect(again).not.toHaveBeenCalled();
    expect(electron.utilityProcess.fork).not.toHaveBeenCalled();
  });

  it('answers gufo:appInfo for the main window only', async () => {
    const [channel, handler] = electron.ipcMain.handle.mock.calls.find(([c]) => c === 'gufo:appInfo')!;
    expect(channel).toBe('gufo:appInfo');
    const info = await handler({ sender: electron.webContents });
    expect(info).toMatchObject({ name: 'Gufo', mode: 'electron', platform: process.platform });
    expect(() => handler({ sender: {} })).toThrow(/unknown page/);
  });
});
