// Electron main process: one window showing the renderer, GufoApi bound over IPC. Kept thin;
// the work lives in src-main/node and in the engine utility process (started on first use).
import { join } from 'node:path';
import { app, BrowserWindow, dialog, ipcMain, shell, type WebContents } from 'electron';
import { API_METHODS, type GufoApi } from '../../src-preload/api';
import { createBackend, type Backend } from '../backend/index';
import { utilityProcessLauncher } from './engine-launcher';

/** Set by `electron-vite dev`: load the renderer from its dev server instead of out/renderer. */
const devServerUrl = process.env.ELECTRON_RENDERER_URL;

let mainWindow: BrowserWindow | undefined;

/** The back end, made when the app is ready; engine utility processes start with the first request. */
let backend: Backend | undefined;

/** Closes the back end before the app quits, so no utility process outlives it and the database is closed. */
function closeBackendOnQuit(): void {
  let closed = false;
  app.on('will-quit', (event) => {
    if (closed || !backend) return;
    event.preventDefault();
    closed = true;
    void backend.close().finally(() => app.quit());
  });
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1200,
    height: 800,
    minWidth: 720,
    minHeight: 480,
    title: 'Gufo',
    show: false,
    webPreferences: {
      preload: join(import.meta.dirname, '../preload/index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    },
  });
  keepInApp(win.webContents);
  win.once('ready-to-show', () => win.show());
  // The built page carries its Content-Security-Policy in a <meta> tag (see src-main/node/csp.ts).
  if (devServerUrl) void win.loadURL(devServerUrl);
  else void win.loadFile(join(import.meta.dirname, '../renderer/index.html'));
  return win;
}

/** The window only ever shows Gufo's own page; web links open in the user's browser instead. */
function keepInApp(contents: WebContents): void {
  contents.on('will-navigate', (event) => {
    event.preventDefault();
    openInBrowser(event.url);
  });
  contents.setWindowOpenHandler(({ url }) => {
    openInBrowser(url);
    return { action: 'deny' };
  });
}

function openInBrowser(url: string): void {
  // Only web pages: a file: or custom-scheme URL handed to the OS could launch a program.
  const protocol = URL.canParse(url) ? new URL(url).protocol : '';
  if (protocol === 'https:' || protocol === 'http:') void shell.openExternal(url);
}

/** Each GufoApi method answers on channel `gufo:<name>`, for the main window only. */
function bindIpc(api: GufoApi): void {
  for (const name of API_METHODS) {
    const method = api[name] as (...args: unknown[]) => Promise<unknown>;
    ipcMain.handle(`gufo:${name}`, (event, ...args: unknown[]) => {
      if (!mainWindow || event.sender !== mainWindow.webContents) {
        throw new Error(`gufo:${name} called from an unknown page`);
      }
      return method.apply(api, args);
    });
  }
}

/** Back-end events go to the main window on channel `gufo:event`. */
function forwardEvents(source: Backend): void {
  source.events.subscribe((event) => {
    if (mainWindow && !mainWindow.isDestroyed()) mainWindow.webContents.send('gufo:event', event);
  });
}

/** The native open dialog, for GufoApi.pickPaths. */
async function pickPaths(kind: 'files' | 'folder'): Promise<string[]> {
  const options: Electron.OpenDialogOptions =
    kind === 'folder'
      ? { title: 'Add a folder of models', properties: ['openDirectory'] }
      : { title: 'Add models', properties: ['openFile', 'multiSelections'], filters: [{ name: 'GGUF models', extensions: ['gguf'] }] };
  const result = mainWindow ? await dialog.showOpenDialog(mainWindow, options) : await dialog.showOpenDialog(options);
  return result.canceled ? [] : result.filePaths;
}

function showMainWindow(): void {
  if (!mainWindow) return;
  if (mainWindow.isMinimized()) mainWindow.restore();
  mainWindow.focus();
}

// A second launch focuses the running window instead of opening another app instance.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.enableSandbox();
  closeBackendOnQuit();
  app.on('second-instance', showMainWindow);
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  void app.whenReady().then(() => {
    backend = createBackend({
      mode: 'electron',
      // GUFO_HOME wins, as in browser mode; otherwise Electron's own user-data folder.
      dataDir: process.env.GUFO_HOME ? undefined : app.getPath('userData'),
      engineLauncher: utilityProcessLauncher(join(import.meta.dirname, 'engine.js')),
      pickPaths,
    });
    bindIpc(backend.api);
    forwardEvents(backend);
    mainWindow = createWindow();
    // macOS keeps the app alive without windows; clicking the dock icon opens one again.
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) mainWindow = createWindow();
    });
  });
}
