/**
 * Where Gufo keeps its data: GUFO_HOME when set, else the OS user-data folder Electron would use
 * for an app named Gufo (so the app and browser mode share one database), and the extra model
 * folders named by GUFO_MODELS_DIRS.
 */
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';

export function dataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.GUFO_HOME) return resolve(env.GUFO_HOME);
  return join(userDataRoot(env, platform), 'Gufo');
}

/** Electron's app.getPath('appData') for each OS; a blank variable counts as unset (as XDG says). */
function userDataRoot(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  if (platform === 'win32') return env.APPDATA || join(homedir(), 'AppData', 'Roaming');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support');
  return env.XDG_CONFIG_HOME || join(homedir(), '.config');
}

/** The database file inside a data dir. */
export function databasePath(dir: string): string {
  return join(dir, 'gufo.db');
}

/** Where exports and downloads go inside a data dir; always scanned for models. */
export function modelsDir(dir: string): string {
  return join(dir, 'models');
}

/** GUFO_MODELS_DIRS: folders separated by the OS path delimiter (":" or ";"), empty entries ignored. */
export function envModelDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.GUFO_MODELS_DIRS ?? '')
    .split(delimiter)
    .filter((dir) => dir.trim() !== '')
    .map((dir) => resolve(dir));
}
