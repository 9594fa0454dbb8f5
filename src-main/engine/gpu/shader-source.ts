/**
 * WGSL sources from shaders/, put together by a tiny preprocessor, so kernels stay one file per
 * op family and each ggml type's block decoder is one small include:
 *
 *   #include "quant/{{TYPE}}.wgsl"   another file under shaders/ (each file at most once)
 *   {{NAME}}                        replaced by a define's value
 *   #if NAME / #else / #endif       kept when the define is truthy (no nesting of the same name needed)
 *
 * Files are read at run time from a shaders/ folder: GUFO_SHADERS, else the one found from this
 * module's URL (the repository's under tsx and vitest; out/shaders, which the electron-vite build
 * copies next to out/main/engine.js), else the current directory's.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export type Defines = Readonly<Record<string, string | number | boolean>>;

let shaderDir: string | undefined;

/** The folder the .wgsl files are read from. */
export function shadersDir(): string {
  return (shaderDir ??= findShadersDir(import.meta.url));
}

/**
 * The first shaders/ folder (one holding matmul.wgsl) among GUFO_SHADERS, the ones found from
 * `moduleUrl` (src-main/engine/gpu/ in the sources: the repository's; out/main/ in a build: out/shaders)
 * and the current directory's.
 */
export function findShadersDir(moduleUrl: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const candidates = [
    env.GUFO_SHADERS,
    fileURLToPath(new URL('../../../shaders/', moduleUrl)),
    fileURLToPath(new URL('../shaders/', moduleUrl)),
    join(cwd, 'shaders'),
  ].filter((d): d is string => !!d);
  const found = candidates.find((d) => existsSync(join(d, 'matmul.wgsl')));
  if (!found) throw new Error(`WGSL shaders not found (looked in ${candidates.join(', ')}); set GUFO_SHADERS`);
  return found;
}

const fileCache = new Map<string, string>();

function readShader(path: string): string {
  let text = fileCache.get(path);
  if (text === undefined) {
    const file = join(shadersDir(), path);
    if (!existsSync(file)) throw new Error(`WGSL include not found: shaders/${path}`);
    text = readFileSync(file, 'utf8');
    fileCache.set(path, text);
  }
  return text;
}

function substitute(line: string, defines: Defines, file: string): string {
  return line.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    if (!(name in defines)) throw new Error(`shaders/${file}: no value for {{${name}}}`);
    return String(defines[name]);
  });
}

function expand(path: string, defines: Defines, seen: Set<string>, out: string[]): void {
  if (seen.has(path)) return;
  seen.add(path);
  // Each open #if: whether its lines are kept.
  const keep: boolean[] = [];
  const active = () => keep.every(Boolean);
  for (const raw of readShader(path).split('\n')) {
    const directive = /^\s*#(\w+)\s*(.*?)\s*$/.exec(raw);
    if (directive) {
      const [, word, arg] = directive as unknown as [string, string, string];
      if (word === 'if') {
        keep.push(!!defines[arg]);
        continue;
      }
      if (word === 'else') {
        if (!keep.length) throw new Error(`shaders/${path}: #else without #if`);
        keep.push(!keep.pop());
        continue;
      }
      if (word === 'endif') {
        if (!keep.length) throw new Error(`shaders/${path}: #endif without #if`);
        keep.pop();
        continue;
      }
      if (word === 'include') {
        if (active()) {
          const m = /^"([^"]+)"$/.exec(substitute(arg, defines, path));
          if (!m) throw new Error(`shaders/${path}: bad #include ${arg}`);
          expand(m[1]!, defines, seen, out);
        }
        continue;
      }
      throw new Error(`shaders/${path}: unknown directive #${word}`);
    }
    if (active()) out.push(substitute(raw, defines, path));
  }
  if (keep.length) throw new Error(`shaders/${path}: #if without #endif`);
}

/** The WGSL of `entry` (a path under shaders/) with its includes expanded and `defines` applied. */
export function shaderSource(entry: string, defines: Defines = {}): string {
  const out: string[] = [];
  expand(entry, defines, new Set(), out);
  return out.join('\n');
}
