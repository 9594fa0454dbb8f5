import { beforeAll, describe, expect, it, vi } from 'vitest';
import { API_METHODS, type GufoBridge, type GufoEvent } from '../../src-preload/api';

// The preload's view of Electron: ipcRenderer (an EventEmitter with invoke), contextBridge, webUtils.
const electron = vi.hoisted(() => {
  // vi.hoisted runs before the imports, so the factory loads what it needs with require().
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { EventEmitter: Emitter } = require('node:events') as typeof import('node:events');
  const exposed = new Map<string, unknown>();
  return {
    exposed,
    ipcRenderer: Object.assign(new Emitter(), { invoke: vi.fn() }),
    contextBridge: { exposeInMainWorld: vi.fn((key: string, api: unknown) => void exposed.set(key, api)) },
    webUtils: { getPathForFile: vi.fn(() => '/home/me/model.gguf') },
  };
});
vi.mock('electron', () => electron);

let gufo: GufoBridge;
beforeAll(async () => {
  await import('../../src-preload/index');
  gufo = electron.exposed.get('gufo') as GufoBridge;
});

describe('preload', () => {
  it('exposes GufoApi as window.gufo, and nothing else', () => {
    expect([...electron.exposed.keys()]).toEqual(['gufo']);
    expect(Object.keys(gufo).sort()).toEqual([...API_METHODS, 'onEvent', 'pathForFile'].sort());
  });

  it('calls each method on its own channel with its arguments', async () => {
    electron.ipcRenderer.invoke.mockResolvedValueOnce({ theme: 'dark' });
    expect(await gufo.updateSettings({ theme: 'dark' })).toEqual({ theme: 'dark' });
    expect(electron.ipcRenderer.invoke).toHaveBeenLastCalledWith('gufo:updateSettings', { theme: 'dark' });
  });

  it("rejects with the back end's own message, without Electron's wrapping", async () => {
    electron.ipcRenderer.invoke.mockRejectedValueOnce(
      new Error(
        `Error invoking remote method 'gufo:updateSettings': Error: setting "theme" must be one of system, light, dark`,
      ),
    );
    await expect(gufo.updateSettings({ theme: 'blue' as never })).rejects.toThrow(
      /^setting "theme" must be one of system, light, dark$/,
    );
    electron.ipcRenderer.invoke.mockRejectedValueOnce(
      new Error(`Error invoking remote method 'gufo:getModel': StoreError: /d/gufo.db is locked`),
    );
    await expect(gufo.getModel(1)).rejects.toThrow(/^\/d\/gufo\.db is locked$/);
  });

  it('passes back-end events to listeners until they stop listening', () => {
    const seen: GufoEvent[] = [];
    const stop = gufo.onEvent((event) => seen.push(event));
    const event: GufoEvent = { type: 'library-changed' };
    electron.ipcRenderer.emit('gufo:event', {}, event);
    stop();
    electron.ipcRenderer.emit('gufo:event', {}, event);
    expect(seen).toEqual([event]);
    expect(electron.ipcRenderer.listenerCount('gufo:event')).toBe(0);
  });

  it('reveals the path of a dropped file', () => {
    expect(gufo.pathForFile!({} as File)).toBe('/home/me/model.gguf');
  });
});
