// Where the Electron binary is, if it has been downloaded. Reads what the `electron` package
// records (path.txt) instead of require('electron'), which would try to download it.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export const ELECTRON_MISSING = "Electron's binary isn't installed (node_modules/electron/dist)";

/** @returns {string | undefined} the absolute path of the Electron executable, if installed */
export function electronBinaryPath() {
  let packageDir;
  try {
    packageDir = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
  } catch {
    return undefined;
  }
  const pathFile = join(packageDir, 'path.txt');
  if (!existsSync(pathFile)) return undefined;
  const binary = join(packageDir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(binary) ? binary : undefined;
}
