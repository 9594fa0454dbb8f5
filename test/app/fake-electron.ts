/**
 * A fake of the Electron APIs the main process uses (no Electron binary can be downloaded on these
 * machines), recording what it is asked to do. Use it from a test file with
 *
 *   const electron = await vi.hoisted(async () => (await import('./fake-electron')).fakeElectron());
 *   vi.mock('electron', () => electron);
 */
import type { BrowserWindowConstructorOptions } from 'electron';
import { EventEmitter } from 'node:events';
import { vi } from 'vitest';

// Any listener at all: a parameter list of unknown would refuse the app's typed listeners.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Listener = (...args: any[]) => unknown;
/** What the app gives ipcMain.handle: it throws or answers a promise. */
export type IpcHandler = (event: { sender: unknown }, ...args: unknown[]) => Promise<unknown>;
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A web contents: its listeners, its window-open handler, what was sent to it. */
export class FakeWebContents extends EventEmitter {
  windowOpenHandler: Listener | undefined;
  url = '';
  send = vi.fn();
  setWindowOpenHandler(handler: Listener): void {
    this.windowOpenHandler = handler;
  }
  getURL(): string {
    return this.url;
  }
  /** Emits `event` with a fresh Electron-like event object; answers whether a listener prevented it. */
  attempt(event: string, details: object = {}, ...args: unknown[]): boolean {
    let prevented = false;
    this.emit(event, { ...details, preventDefault: () => (prevented = true) }, ...args);
    return prevented;
  }
}

export function fakeElectron() {
  const windows: FakeBrowserWindow[] = [];

  class FakeBrowserWindow extends EventEmitter {
    webContents = new FakeWebContents();
    bounds: Rect;
    maximized = false;
    destroyed = false;
    shown = false;
    loadURL = vi.fn((url: string) => {
      this.webContents.url = url;
      return Promise.resolve();
    });
    // The options the app passes, read back by the tests.
    constructor(public options: BrowserWindowConstructorOptions) {
      super();
      this.bounds = { x: options.x ?? 0, y: options.y ?? 0, width: options.width ?? 0, height: options.height ?? 0 };
      windows.push(this);
    }
    static getAllWindows = () => windows.filter((w) => !w.destroyed);
    getNormalBounds = () => ({ ...this.bounds });
    isMaximized = () => this.maximized;
    maximize = vi.fn(() => void (this.maximized = true));
    isMinimized = () => false;
    restore = vi.fn();
    focus = vi.fn();
    show = vi.fn(() => void (this.shown = true));
    isDestroyed = () => this.destroyed;
    /** Moves the window as the user would. */
    moveTo(bounds: Partial<Rect>): void {
      Object.assign(this.bounds, bounds);
      this.emit('move');
    }
  }

  const app = Object.assign(new EventEmitter(), {
    isPackaged: false,
    paths: new Map<string, string>(),
    requestSingleInstanceLock: vi.fn(() => true),
    enableSandbox: vi.fn(),
    setName: vi.fn(),
    setAppUserModelId: vi.fn(),
    setPath: vi.fn((name: string, path: string) => void app.paths.set(name, path)),
    getPath: vi.fn((name: string) => app.paths.get(name) ?? `/fake/${name}`),
    quit: vi.fn(),
    exit: vi.fn(),
    whenReady: vi.fn(async () => {}),
  });
  vi.spyOn(app, 'on');

  const permissions = { request: undefined as Listener | undefined, check: undefined as Listener | undefined };

  return {
    windows,
    permissions,
    app,
    BrowserWindow: FakeBrowserWindow,
    ipcMain: { handle: vi.fn((_channel: string, _handler: IpcHandler) => {}) },
    utilityProcess: { fork: vi.fn() },
    shell: { openExternal: vi.fn(() => Promise.resolve()), openPath: vi.fn(() => Promise.resolve('')) },
    dialog: {
      showErrorBox: vi.fn(),
      showMessageBox: vi.fn(() => Promise.resolve({ response: 0, checkboxChecked: false })),
      showOpenDialog: vi.fn(() => Promise.resolve({ canceled: true, filePaths: [] as string[] })),
    },
    Menu: {
      buildFromTemplate: vi.fn((template: unknown[]) => ({ template })),
      setApplicationMenu: vi.fn((_menu: { template: unknown[] }) => {}),
    },
    nativeTheme: { themeSource: 'system' as 'system' | 'light' | 'dark' },
    screen: {
      getAllDisplays: vi.fn(() => [
        {
          id: 1,
          bounds: { x: 0, y: 0, width: 1920, height: 1080 },
          workArea: { x: 0, y: 0, width: 1920, height: 1040 },
        },
      ]),
    },
    session: {
      defaultSession: {
        setPermissionRequestHandler: (handler: Listener) => void (permissions.request = handler),
        setPermissionCheckHandler: (handler: Listener) => void (permissions.check = handler),
      },
    },
  };
}

export type FakeElectron = ReturnType<typeof fakeElectron>;
export type FakeWindow = FakeElectron['windows'][number];

/** The listener the app registered for `event` with app.on. */
export function appListener(electron: FakeElectron, event: string): Listener {
  const call = vi.mocked(electron.app).on.mock.calls.find(([name]) => name === event);
  if (!call) throw new Error(`the app never listened for '${event}'`);
  return call[1] as Listener;
}
