// `npm run dist`: builds Gufo's installer for this OS (Linux: AppImage and deb; macOS: dmg;
// Windows: NSIS) into dist/, with electron-builder.json. Needs Electron's binary: it is what the
// installer ships, and native modules (better-sqlite3) are rebuilt against its version.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ELECTRON_MISSING, electronBinaryPath } from './electron-binary.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);

/** electron-builder's flag for the OS we are on: it builds that OS's targets from electron-builder.json. */
const PLATFORM_FLAGS = { linux: '--linux', darwin: '--mac', win32: '--win' };

/** Runs a package's command-line entry with this Node, in the foreground; exits with its status if it fails. */
function run(bin, args) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const binary = electronBinaryPath();
if (!binary) {
  console.error(`npm run dist: ${ELECTRON_MISSING}, so no installer can be built on this machine.`);
  console.error(
    'Install it with `node node_modules/electron/install.js` (it downloads Electron), then run `npm run dist` again.',
  );
  process.exit(1);
}
const platformFlag = PLATFORM_FLAGS[process.platform];
if (!platformFlag) {
  console.error(`npm run dist: electron-builder has no installer for ${process.platform}.`);
  process.exit(1);
}

run(join(dirname(require.resolve('electron-vite/package.json')), 'bin', 'electron-vite.js'), ['build']);
run(join(dirname(require.resolve('electron-builder/package.json')), 'cli.js'), [
  platformFlag,
  '--publish',
  'never',
  // Package the Electron that is installed (the one the app was tested with) instead of downloading it again.
  `--config.electronDist=${join(dirname(require.resolve('electron/package.json')), 'dist')}`,
]);
