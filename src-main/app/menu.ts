/**
 * The application menu, as a plain template (Menu.buildFromTemplate turns it into the real one).
 * Standard items use Electron's roles, so they get each OS's native behaviour, labels and shortcuts.
 */
import type { MenuItemConstructorOptions } from 'electron';

/** What Gufo's own menu items do. */
export interface MenuActions {
  addModels(): void;
  addFolder(): void;
  openDataFolder(): void;
  about(): void;
}

export interface MenuOptions {
  platform: NodeJS.Platform;
  /** Reload and the developer tools are for development builds only. */
  packaged: boolean;
  actions: MenuActions;
}

export function menuTemplate({ platform, packaged, actions }: MenuOptions): MenuItemConstructorOptions[] {
  const mac = platform === 'darwin';
  const about: MenuItemConstructorOptions = { label: 'About Gufo', click: () => actions.about() };
  const openDataFolder: MenuItemConstructorOptions = {
    label: 'Open Data Folder',
    click: () => actions.openDataFolder(),
  };
  const sep: MenuItemConstructorOptions = { type: 'separator' };

  const appMenu: MenuItemConstructorOptions = {
    label: 'Gufo',
    submenu: [
      about,
      sep,
      { role: 'services' },
      sep,
      { role: 'hide' },
      { role: 'hideOthers' },
      { role: 'unhide' },
      sep,
      { role: 'quit' },
    ],
  };
  const file: MenuItemConstructorOptions = {
    label: 'File',
    submenu: [
      { label: 'Add Models…', accelerator: 'CmdOrCtrl+O', click: () => actions.addModels() },
      { label: 'Add Folder…', accelerator: 'CmdOrCtrl+Shift+O', click: () => actions.addFolder() },
      sep,
      openDataFolder,
      sep,
      // macOS quits from the app menu; File ends with closing the window there.
      mac ? { role: 'close' } : { role: 'quit' },
    ],
  };
  const edit: MenuItemConstructorOptions = {
    label: 'Edit',
    submenu: [
      { role: 'undo' },
      { role: 'redo' },
      sep,
      { role: 'cut' },
      { role: 'copy' },
      { role: 'paste' },
      ...(mac ? [{ role: 'pasteAndMatchStyle' } as const] : []),
      { role: 'delete' },
      sep,
      { role: 'selectAll' },
    ],
  };
  const view: MenuItemConstructorOptions = {
    label: 'View',
    submenu: [
      ...(packaged
        ? []
        : [{ role: 'reload' } as const, { role: 'forceReload' } as const, { role: 'toggleDevTools' } as const, sep]),
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      sep,
      { role: 'togglefullscreen' },
    ],
  };
  const window: MenuItemConstructorOptions = {
    role: 'windowMenu',
    submenu: mac
      ? [{ role: 'minimize' }, { role: 'zoom' }, sep, { role: 'front' }]
      : [{ role: 'minimize' }, { role: 'close' }],
  };
  const help: MenuItemConstructorOptions = {
    role: 'help',
    // On macOS, About is in the app menu.
    submenu: [...(mac ? [] : [about, sep]), openDataFolder],
  };
  return [...(mac ? [appMenu] : []), file, edit, view, window, help];
}
