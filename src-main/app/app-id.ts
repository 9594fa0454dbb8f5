/**
 * The app's id: electron-builder's appId (electron-builder.json) and, on Windows, the
 * AppUserModelID that groups Gufo's windows and notifications under its installed shortcut.
 */
export const APP_ID = 'io.gufo.app';
