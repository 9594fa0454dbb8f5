// `npm start`: the Electron app when its binary is installed, otherwise browser mode
// (`gufo serve`), opening the printed address in the default browser when possible.
// Pass --no-open to only print the address.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ELECTRON_MISSING, electronBinaryPath } from './electron-binary.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const openBrowser = !process.argv.includes('--no-open');

/** Runs a child in the foreground: Ctrl+C goes to it, and its exit code becomes ours. */
function run(args, stdout) {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['inherit', stdout, 'inherit'] });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  return child;
}

function open(url) {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  // Best effort: no browser (a server, a container) is fine, the address is printed anyway.
  spawn(command, args, { stdio: 'ignore', detached: true })
    .on('error', () => {})
    .unref();
}

if (electronBinaryPath()) {
  const electronVite = join(
    dirname(createRequire(import.meta.url).resolve('electron-vite/package.json')),
    'bin',
    'electron-vite.js',
  );
  run([electronVite, 'preview'], 'inherit');
} else {
  console.log(`${ELECTRON_MISSING}, so Gufo starts in browser mode.`);
  const serve = run([join(root, 'bin', 'gufo.mjs'), 'serve'], 'pipe');
  createInterface({ input: serve.stdout }).on('line', (line) => {
    console.log(line);
    const url = /^Gufo is running at (\S+)$/.exec(line)?.[1];
    if (url && openBrowser) open(url);
  });
}
