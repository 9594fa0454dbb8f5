/** The app's one window: the renderer in a sandbox, with the preload's GufoApi as its only door. */
import { join } from 'node:path';
import { BrowserWindow } from 'electron';
import { MIN_WINDOW_SIZE, type WindowState } from './window-state';

/** `page`: the built renderer's file: URL, or the dev server's. */
export function createMainWindow(page: string, state: WindowState): BrowserWindow {
  const { x, y, width, height, maximized } = state;
  const win = new BrowserWindow({
    ...(x === undefined || y === undefined ? { center: true } : { x, y }),
    width,
    height,
    minWidth: MIN_WINDOW_SIZE.width,
    minHeight: MIN_WINDOW_SIZE.height,
    title: 'Gufo',
    show: false,
    webPreferences: {
      preload: join(import.meta.dirname, '../preload/index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webviewTag: false,
      // Chromium's spellchecker downloads its dictionaries; Gufo stays offline.
      spellcheck: false,
    },
  });
  win.once('ready-to-show', () => {
    if (maximized) win.maximize();
    win.show();
  });
  // The built page carries its Content-Security-Policy in a <meta> tag (see src-main/node/csp.ts).
  void win.loadURL(page);
  return win;
}
