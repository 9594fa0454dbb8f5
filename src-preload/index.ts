// Runs sandboxed in the renderer before the page: exposes GufoApi and its events, and nothing else
// of Electron, as `window.gufo`.
import { contextBridge, ipcRenderer, webUtils } from 'electron';
import { API_METHODS, type GufoBridge, type GufoEvent } from './api';

const methods = Object.fromEntries(API_METHODS.map((name) => [name, (...args: unknown[]) => ipcRenderer.invoke(`gufo:${name}`, ...args)]));

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
