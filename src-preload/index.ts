// Runs sandboxed in the renderer before the page: exposes GufoApi and its events, and nothing else
// of Electron, as `window.gufo`.
import { contextBridge, ipcRenderer, webUtils } from 'electron';
import { API_METHODS, type GufoBridge, type GufoEvent } from './api';

/** Electron wraps a handler's error as "Error invoking remote method 'gufo:x': Error: <message>"; the UI shows only the message. */
const REMOTE_ERROR_PREFIX = /^Error invoking remote method '[^']*': (?:[A-Za-z]*Error: )?/;

function invoke(name: string, args: unknown[]): Promise<unknown> {
  return ipcRenderer.invoke(`gufo:${name}`, ...args).catch((err: unknown) => {
    throw new Error(err instanceof Error ? err.message.replace(REMOTE_ERROR_PREFIX, '') : String(err));
  });
}

const methods = Object.fromEntries(API_METHODS.map((name) => [name, (...args: unknown[]) => invoke(name, args)]));

const bridge = {
  ...methods,
  onEvent(listener: (event: GufoEvent) => void) {
    const forward = (_event: unknown, payload: GufoEvent) => listener(payload);
    ipcRenderer.on('gufo:event', forward);
    return () => void ipcRenderer.removeListener('gufo:event', forward);
  },
  pathForFile: (file: File) => webUtils.getPathForFile(file),
} as GufoBridge;

contextBridge.exposeInMainWorld('gufo', bridge);
