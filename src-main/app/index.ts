// Electron main process: one window showing the renderer, GufoApi bound over IPC. Kept thin;
// the work lives in src-main/backend and in the engine utility process (started on first use).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { app, BrowserWindow, dialog, Menu, nativeTheme, screen, session, type WebContents } from 'electron';
import { createBackend, type Backend } from '../backend/index';
import { dataDir } from '../node/data-dir';
import { APP_ID } from './app-id';
import { pickPaths } from './dialogs';
import { unpackedPath, utilityProcessLauncher } from './engine-launcher';
import { bindIpc, forwardEvents } from './ipc';
import { createMainWindow } from './main-window';
import { menuTemplate } from './menu';
import { menuActions } from './menu-actions';
import { keepOnAppPage, refusePermissions, samePage } from './security';
import { placeWindow, readWindowState, WindowStateKeeper } from './window-state';

/** The renderer: `electron-vite dev`'s server when it set ELECTRON_RENDERER_URL, else the built page. */
const appPage =
  process.env.ELECTRON_RENDERER_URL ?? pathToFileURL(join(import.meta.dirname, '../renderer/index.html')).href;
const isAppPage = samePage(appPage);

/**
 * GUFO_HOME, else the OS user-data folder for "Gufo" — the one browser mode uses too, whatever
 * name Electron would derive from package.json. Chromium's own files and the window state go there as well.
 */
const home = dataDir();
const windowState = new WindowStateKeeper(join(home, 'window-state.json'));

const engineEntry = unpackedPath(join(import.meta.dirname, 'engine.js'));

let mainWindow: BrowserWindow | undefined;

/** The back end, made when the app is ready; engine utility processes start with the first request. */
let backend: Backend | undefined;

/** The database may be locked by another process or come from a newer Gufo: say so and quit, leaving it as it is. */
function openBackend(): Backend | undefined {
  try {
    return createBackend({
      mode: 'electron',
      dataDir: home,
      engineLauncher: utilityProcessLauncher(engineEntry),
      pickPaths: (kind) => pickPaths(mainWindow, kind),
    });
  } catch (err) {
    dialog.showErrorBox('Gufo cannot start', err instanceof Error ? err.message : String(err));
    app.exit(1);
    return undefined;
  }
}

function openMainWindow(): void {
  const displays = screen.getAllDisplays().map((display) => display.workArea);
  const win = createMainWindow(appPage, placeWindow(readWindowState(windowState.file), displays));
  windowState.track(win);
  win.on('closed', () => {
    if (mainWindow === win) mainWindow = undefined;
  });
  mainWindow = win;
}

function isMainWindow(sender: WebContents): boolean {
  return mainWindow !== undefined && !mainWindow.isDestroyed() && sender === mainWindow.webContents;
}

function showMainWindow(): void {
  if (!mainWindow) return;
  if (mainWindow.isMinimized()) mainWindow.restore();
  mainWindow.focus();
}

/** Native menus, dialogs and scrollbars follow the theme chosen in Settings. */
function followTheme(source: Backend): void {
  try {
    nativeTheme.themeSource = source.context.settings.get().theme;
  } catch (err) {
    // An unreadable settings row: the UI reports it; the window still opens, in the system's theme.
    console.error('gufo:', err);
  }
  source.events.subscribe((event) => {
    if (event.type === 'settings-changed') nativeTheme.themeSource = event.settings.theme;
  });
}

/** Before the app quits: the window state is written, jobs stop, no utility process outlives it, the database closes. */
function closeOnQuit(): void {
  let closed = false;
  app.on('will-quit', (event) => {
    if (closed) return;
    event.preventDefault();
    closed = true;
    void Promise.allSettled([windowState.flush(), backend?.close()]).finally(() => app.quit());
  });
}

function start(): void {
  backend = openBackend();
  if (!backend) return;
  refusePermissions(session.defaultSession, isAppPage);
  bindIpc(backend.api, isMainWindow);
  forwardEvents(backend.events, () => mainWindow);
  followTheme(backend);
  const actions = menuActions(backend, () => mainWindow);
  Menu.setApplicationMenu(
    Menu.buildFromTemplate(menuTemplate({ platform: process.platform, packaged: app.isPackaged, actions })),
  );
  openMainWindow();
  // macOS keeps the app alive without windows; clicking the dock icon opens one again.
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) openMainWindow();
  });
}

app.setName('Gufo');
// Before the single-instance lock, which lives in the user-data folder: one Gufo per data folder.
app.setPath('userData', home);
if (process.platform === 'win32') app.setAppUserModelId(APP_ID);

// A second launch focuses the running window instead of opening another app instance.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.enableSandbox();
  closeOnQuit();
  app.on('web-contents-created', (_event, contents) => keepOnAppPage(contents, isAppPage));
  app.on('second-instance', showMainWindow);
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  void app.whenReady().then(start);
}
