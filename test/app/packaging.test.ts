/**
 * electron-builder.json, checked with electron-builder's own code: its schema, and the matcher it
 * uses to decide what stays outside app.asar. (Building an installer needs Electron's binary,
 * which cannot be downloaded here: `npm run dist` does that where it is installed.)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import type { Configuration } from 'app-builder-lib';
import { describe, expect, it } from 'vitest';
import { ELECTRON_MISSING, electronBinaryPath } from '../../scripts/electron-binary.mjs';
import { APP_ID } from '../../src-main/app/app-id';
import { REPO_ROOT } from '../support/paths';

/** The parts of electron-builder.json these tests read. */
interface BuilderConfig {
  appId: string;
  productName: string;
  asar: boolean;
  npmRebuild: boolean;
  asarUnpack: string[];
  files: string[];
  linux: PlatformConfig;
  mac: PlatformConfig;
  win: PlatformConfig;
}
interface PlatformConfig {
  target: string[];
  files?: string[];
}
interface Manifest {
  main: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const configText = readFileSync(join(REPO_ROOT, 'electron-builder.json'), 'utf8');
const config = JSON.parse(configText) as BuilderConfig;
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Required<Manifest>;

// app-builder-lib is electron-builder's engine: load the very modules it packages with.
const builder = createRequire(createRequire(import.meta.url).resolve('electron-builder/package.json'));
const { FileMatcher } = builder(
  'app-builder-lib/out/fileMatcher.js',
) as typeof import('app-builder-lib/out/fileMatcher');
const { validateConfiguration } = builder(
  'app-builder-lib/out/util/config/config.js',
) as typeof import('app-builder-lib/out/util/config/config');
const { DebugLogger } = builder('builder-util') as typeof import('builder-util');

/** Whether electron-builder would put `path` (relative to the app folder) in app.asar.unpacked. */
const unpackFilter = new FileMatcher(REPO_ROOT, '/', (s: string) => s, config.asarUnpack).createFilter();
const isUnpacked = (path: string) => unpackFilter(join(REPO_ROOT, path), { isDirectory: () => false } as Stats);

/** Whether the `files` patterns (global and `platform`'s) leave `path` out of the package. */
function isExcluded(path: string, platform: 'linux' | 'mac' | 'win'): boolean {
  const excludes = [...config.files, ...(config[platform].files ?? [])].filter((p: string) => p.startsWith('!'));
  const matcher = new FileMatcher(REPO_ROOT, '/', (s: string) => s, ['**/*', ...excludes]);
  return !matcher.createFilter()(join(REPO_ROOT, path), { isDirectory: () => false } as Stats);
}

/** The folder of package `name` as Node finds it from `fromDir` (nearest node_modules up), if installed. */
function findPackage(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** Installed packages `names` need at run time: themselves and their (optional) dependencies, recursively. */
function runtimeClosure(names: string[], fromDir = REPO_ROOT): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (name: string, from: string) => {
    const dir = findPackage(name, from);
    if (!dir || found.has(dir)) return;
    found.set(dir, name);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) visit(dep, dir);
  };
  for (const name of names) visit(name, fromDir);
  return found;
}

/** Files under `dir` whose name ends with `suffix`, not descending into nested node_modules (other packages). */
function filesEndingWith(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : filesEndingWith(path, suffix);
    return entry.name.endsWith(suffix) ? [path] : [];
  });
}

/**
 * Packages imported at run time by `entry` and every source file it imports relatively
 * (type-only imports are erased, so they do not count).
 */
function packagesImportedBy(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '')
      .replace(/^\s*(import|export) type [^;]*;/gm, '');
    const statements =
      /^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;
    for (const match of code.matchAll(statements)) {
      const specifier = (match[1] ?? match[2] ?? match[3])!;
      if (specifier.startsWith('.')) {
        if (!specifier.endsWith('.json')) visit(sourceFile(dirname(file), specifier));
      } else if (!specifier.startsWith('node:')) {
        packages.add(
          specifier
            .split('/')
            .slice(0, specifier.startsWith('@') ? 2 : 1)
            .join('/'),
        );
      }
    }
  };
  visit(join(REPO_ROOT, entry));
  return packages;
}

function sourceFile(dir: string, specifier: string): string {
  const base = join(dir, specifier);
  const found = [`${base}.ts`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts'), base].find(
    (f) => existsSync(f) && statSync(f).isFile(),
  );
  if (!found) throw new Error(`cannot resolve ${specifier} from ${dir}`);
  return found;
}

const fromRoot = (path: string) => relative(REPO_ROOT, path).split('\\').join('/');

describe('electron-builder.json', () => {
  it("is valid by electron-builder's schema", async () => {
    await expect(
      validateConfiguration(JSON.parse(configText) as Configuration, new DebugLogger(false)),
    ).resolves.toBeUndefined();
  });

  it('names the app as the main process does (the Windows AppUserModelID is the appId)', () => {
    expect(config.appId).toBe(APP_ID);
    expect(config.productName).toBe('Gufo');
  });

  it('builds AppImage and deb on Linux, dmg on macOS, NSIS on Windows', () => {
    expect([config.linux.target, config.mac.target, config.win.target]).toEqual([
      ['AppImage', 'deb'],
      ['dmg'],
      ['nsis'],
    ]);
  });

  it('rebuilds native modules for Electron', () => {
    expect(config.npmRebuild).toBe(true);
    expect(config.asar).toBe(true);
  });

  it('packages the build and package.json, whose main is the built main process', () => {
    expect(config.files).toEqual(expect.arrayContaining(['out/**', 'package.json']));
    expect(pkg.main).toBe('out/main/index.js');
  });

  it('unpacks every native addon of the runtime dependencies', () => {
    const addons = [...runtimeClosure(Object.keys(pkg.dependencies)).keys()]
      .flatMap((dir) => filesEndingWith(dir, '.node'))
      .map(fromRoot);
    // Those Gufo loads itself must be among them, or this test looks in the wrong place.
    expect(addons).toEqual(
      expect.arrayContaining([
        'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
        `node_modules/webgpu/dist/${process.platform === 'darwin' ? 'darwin-universal' : `${process.platform}-${process.arch}`}/dawn.node`,
        expect.stringMatching(/^node_modules\/@koromix\/koffi-[^/]+\/.*koffi\.node$/),
      ]),
    );
    expect(addons.filter((path) => !isUnpacked(path))).toEqual([]);
  });

  it('unpacks what the engine process loads: its entry, the chunks it shares, the shaders', () => {
    for (const path of [
      'out/main/engine.js',
      'out/main/chunks/dequantize-CRv-XBeT.js',
      'out/shaders/matmul.wgsl',
      'out/shaders/quant/q4_k.wgsl',
    ]) {
      expect(isUnpacked(path), path).toBe(true);
    }
    // The rest stays in the archive.
    for (const path of [
      'out/main/index.js',
      'out/preload/index.cjs',
      'out/renderer/index.html',
      'node_modules/@huggingface/jinja/package.json',
    ]) {
      expect(isUnpacked(path), path).toBe(false);
    }
    // With a build at hand: every file the built engine imports itself.
    const built = join(REPO_ROOT, 'out/main/engine.js');
    if (existsSync(built)) {
      const local = [...readFileSync(built, 'utf8').matchAll(/^import\s[^'"]*['"](\.[^'"]+)['"]/gm)].map(([, path]) =>
        fromRoot(join(dirname(built), path!)),
      );
      expect(local.filter((path) => !isUnpacked(path))).toEqual([]);
    }
  });

  it('unpacks the packages the engine imports, whole: it runs from app.asar.unpacked, where Node looks for them', () => {
    const imported = packagesImportedBy('src-main/engine/index.ts');
    expect([...imported].sort()).toEqual(['koffi', 'webgpu']);
    // Their optional dependencies hold the platform binaries (koffi's @koromix/*); webgpu's plain
    // dependencies serve only its build scripts.
    const needed = [...imported].flatMap((name) => {
      const dir = findPackage(name, REPO_ROOT)!;
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
      return [dir, ...Object.keys(manifest.optionalDependencies ?? {}).flatMap((dep) => findPackage(dep, dir) ?? [])];
    });
    const files = needed
      .flatMap((dir) => [...filesEndingWith(dir, '.js'), ...filesEndingWith(dir, '.cjs'), join(dir, 'package.json')])
      .map(fromRoot);
    expect(files.filter((path) => !isUnpacked(path))).toEqual([]);
  });

  it('keeps every package the main and engine processes import at run time, and lists it as a dependency', () => {
    const imported = new Set([
      ...packagesImportedBy('src-main/app/index.ts'),
      ...packagesImportedBy('src-main/engine/index.ts'),
    ]);
    imported.delete('electron'); // provided by the app itself
    expect([...imported].filter((name) => !(name in pkg.dependencies))).toEqual([]);
    for (const platform of ['linux', 'mac', 'win'] as const) {
      const dropped = [...runtimeClosure([...imported]).keys()]
        .map((dir) => fromRoot(join(dir, 'package.json')))
        .filter((path) => isExcluded(path, platform));
      expect(dropped, platform).toEqual([]);
    }
  });

  it('leaves out what the app never loads: the CLI runner, SQLite sources, other OSes’ GPU binaries', () => {
    expect(isExcluded('node_modules/tsx/dist/cli.mjs', 'linux')).toBe(true);
    expect(isExcluded('out/cli/gufo.js', 'linux')).toBe(true);
    expect(isExcluded('node_modules/better-sqlite3/deps/sqlite3/sqlite3.c', 'linux')).toBe(true);
    expect(isExcluded('node_modules/better-sqlite3/build/Release/better_sqlite3.node', 'linux')).toBe(false);
    expect(isExcluded('node_modules/webgpu/dist/win32-x64/dawn.node', 'linux')).toBe(true);
    expect(isExcluded('node_modules/webgpu/dist/linux-x64/dawn.node', 'linux')).toBe(false);
    expect(isExcluded('node_modules/webgpu/dist/darwin-universal/dawn.node', 'mac')).toBe(false);
    expect(isExcluded('node_modules/webgpu/dist/win32-arm64/dawn.node', 'win')).toBe(false);
    expect(isExcluded('node_modules/webgpu/dist/linux-x64/dawn.node', 'win')).toBe(true);
  });
});

describe('npm run dist', () => {
  // Where Electron is installed it builds the installer (minutes): not a unit test.
  it.skipIf(electronBinaryPath() !== undefined)(
    'says why it cannot build an installer without Electron, and fails',
    () => {
      const result = spawnSync(process.execPath, ['scripts/dist.mjs'], { cwd: REPO_ROOT, encoding: 'utf8' });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(
        `npm run dist: ${ELECTRON_MISSING}, so no installer can be built on this machine.`,
      );
      expect(result.stdout).toBe('');
    },
  );
});
