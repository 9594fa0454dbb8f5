// Runs sandboxed in the renderer before the page: exposes GufoApi, and nothing else of Electron,
// as `window.gufo`.
import { contextBridge, ipcRenderer } from 'electron';
import type { GufoApi } from './api';

const api: GufoApi = {
  appInfo: () => ipcRenderer.invoke('gufo:appInfo'),
};

contextBridge.exposeInMainWorld('gufo', api);
