/** GufoApi over Electron IPC: each method answers on channel `gufo:<name>`; events go out on `gufo:event`. */
import { ipcMain, type BrowserWindow, type WebContents } from 'electron';
import { API_METHODS, type GufoApi } from '../../src-preload/api';
import type { EventHub } from '../backend/events';

/** Binds every method, answering only `trusted` senders (the main window's page). */
export function bindIpc(api: GufoApi, trusted: (sender: WebContents) => boolean): void {
  for (const name of API_METHODS) {
    ipcMain.handle(`gufo:${name}`, (event, ...args: unknown[]) => {
      if (!trusted(event.sender)) throw new Error(`gufo:${name} called from an unknown page`);
      return (api[name] as (...a: unknown[]) => Promise<unknown>).apply(api, args);
    });
  }
}

/** Sends every back-end event to the window there is at the time, if any. */
export function forwardEvents(events: EventHub, window: () => BrowserWindow | undefined): void {
  events.subscribe((event) => {
    const win = window();
    if (win && !win.isDestroyed()) win.webContents.send('gufo:event', event);
  });
}
