/**
 * `npm test`'s static checks: the typecheck, lint and format check npm scripts at once. Each is a
 * single-threaded process (together over two minutes of CPU, eslint's type-aware rules the
 * most), so on a 2-core CI machine running them side by side halves their wall time. Each
 * script's output is printed whole when it ends; the exit status is the first failure's.
 */
import { spawn } from 'node:child_process';

const SCRIPTS = ['typecheck', 'lint', 'format:check'];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(script) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(npm, ['run', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n`, started }));
    child.on('close', (code) => resolve({ code: code ?? 1, output, started }));
  }).then((result) => {
    const seconds = ((Date.now() - result.started) / 1000).toFixed(0);
    const verdict = result.code === 0 ? 'passed' : `FAILED (exit ${result.code})`;
    process.stdout.write(`\n── npm run ${script}: ${verdict} in ${seconds} s\n${result.output}`);
    return result.code;
  });
}

const codes = await Promise.all(SCRIPTS.map(run));
process.exitCode = codes.find((code) => code !== 0) ?? 0;
