/**
 * The contract between the UI and the back end: the only door between them.
 *
 * Types only, so the renderer can import this file without pulling in any code. Electron binds
 * it over IPC (src-preload/index.ts), browser mode over HTTP (src-main/node/server); both call
 * the one implementation in src-main/node/api.ts. Every method takes and returns plain JSON
 * values, since both bindings serialize them.
 */
export interface GufoApi {
  appInfo(): Promise<AppInfo>;
}

/** How the UI is being delivered: an Electron window, or a browser tab on `gufo serve`. */
export type AppMode = 'electron' | 'browser';

export interface AppInfo {
  name: 'Gufo';
  /** The version in package.json. */
  version: string;
  mode: AppMode;
  /** `process.platform` of the back end. */
  platform: string;
  /** Node.js version of the back end. */
  node: string;
}
