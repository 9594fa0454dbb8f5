/**
 * WGSL sources from shaders/, put together by a tiny preprocessor, so kernels stay one file per
 * op family and each ggml type's block decoder is one small include:
 *
 *   #include "quant/{{TYPE}}.wgsl"   another file under shaders/ (each file at most once)
 *   {{NAME}}                        replaced by a define's value
 *   #if NAME / #else / #endif       kept when the define is truthy (no nesting of the same name needed)
 *   #struct Name                    the WGSL of the uniform struct Name declared in kernel-uniforms.ts
 *                                   (each struct at most once), so its layout is written only there
 *   #unroll NAME FROM TO STEP       the lines up to #endunroll once for each NAME in FROM, FROM + STEP,
 *                                   … below TO, with {{NAME}} its value (bounds may be {{defines}};
 *                                   blocks nest):
 *                                   CPU drivers keep a private array in registers only where every
 *                                   index is a constant, and do not always unroll a loop themselves
 *
 * Files are read at run time from a shaders/ folder (see `findShadersDir`), or from another one a
 * caller names (a variant of a kernel measured beside the shipped one, `npm run bench:attention --
 * --against DIR`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { ggmlTypeByName } from '../../core/ggml-types';
import { gpuBlockDefines } from './weights';
import { kernelUniform, kernelUniformNames } from './kernel-uniforms';

export type Defines = Readonly<Record<string, string | number | boolean>>;

let shaderDir: string | undefined;

/** The folder the .wgsl files are read from. */
export function shadersDir(): string {
  return (shaderDir ??= findShadersDir(import.meta.url));
}

/**
 * The shaders/ folder: GUFO_SHADERS when set, else the one that goes with this module, `moduleUrl`.
 * Run from the sources (src-main/engine/gpu/*.ts under tsx or vitest) that is the repository's
 * shaders/; built (out/main/engine.js for the app, out/cli/*.js for the CLI), out/shaders, where
 * both builds copy it.
 */
export function findShadersDir(moduleUrl: string, env: NodeJS.ProcessEnv = process.env): string {
  const dir =
    env.GUFO_SHADERS ||
    fileURLToPath(new URL(moduleUrl.endsWith('.ts') ? '../../../shaders/' : '../shaders/', moduleUrl));
  if (!existsSync(join(dir, 'matmul.wgsl'))) {
    throw new Error(
      `WGSL shaders not found: ${dir} holds no matmul.wgsl (${env.GUFO_SHADERS ? 'check GUFO_SHADERS' : 'rebuild with npm run build, or set GUFO_SHADERS'})`,
    );
  }
  return dir;
}

/** Each folder's files, by path under it. */
const fileCache = new Map<string, Map<string, string>>();

function readShader(dir: string, path: string): string {
  let files = fileCache.get(dir);
  if (!files) fileCache.set(dir, (files = new Map<string, string>()));
  let text = files.get(path);
  if (text === undefined) {
    const file = join(dir, path);
    if (!existsSync(file)) throw new Error(`WGSL include not found: ${file}`);
    text = readFileSync(file, 'utf8');
    files.set(path, text);
  }
  return text;
}

/** `file`: the file's path as errors name it, its folder included (shaders/ or a variant's). */
function substitute(line: string, defines: Defines, file: string): string {
  return line.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    if (!(name in defines)) throw new Error(`${file}: no value for {{${name}}}`);
    return String(defines[name]);
  });
}

/**
 * The #unroll block whose header is line `at`: the index of its #endunroll, and with `defines`
 * (where the block is kept) its body written out once per value.
 */
function unrollBlock(lines: readonly string[], at: number, file: string, defines?: Defines) {
  const [, name, range] = /^\s*#unroll\s+(\w+)\s*(.*?)\s*$/.exec(lines[at]!) as unknown as [string, string, string];
  let end = at;
  for (let depth = 1; depth > 0;) {
    if (++end === lines.length) throw new Error(`${file}: #unroll ${name} without #endunroll`);
    if (/^\s*#unroll\b/.test(lines[end]!)) depth++;
    else if (/^\s*#endunroll\b/.test(lines[end]!)) depth--;
  }
  const out: string[] = [];
  if (defines) {
    const bounds = substitute(range, defines, file).split(/\s+/).map(Number);
    const [from, to, step] = bounds as [number, number, number];
    if (bounds.length !== 3 || !bounds.every(Number.isInteger) || step <= 0) {
      throw new Error(`${file}: #unroll ${name} needs FROM TO STEP, integers, got "${range}"`);
    }
    const body = lines.slice(at + 1, end);
    for (let value = from; value < to; value += step) {
      out.push(...body.map((line) => line.replaceAll(`{{${name}}}`, String(value))));
    }
  }
  return { lines: out, end };
}

function expand(dir: string, path: string, defines: Defines, seen: Set<string>, out: string[]): void {
  if (seen.has(path)) return;
  seen.add(path);
  // Each open #if: whether its lines are kept.
  const keep: boolean[] = [];
  const active = () => keep.every(Boolean);
  const lines = readShader(dir, path).split('\n');
  const file = join(dir, path);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const directive = /^\s*#(\w+)\s*(.*?)\s*$/.exec(raw);
    if (directive) {
      const [, word, arg] = directive as unknown as [string, string, string];
      if (word === 'unroll') {
        const block = unrollBlock(lines, i, file, active() ? defines : undefined);
        // Written out in place of the block, then read on as any other lines.
        lines.splice(i, block.end + 1 - i, ...block.lines);
        i--;
        continue;
      }
      if (word === 'if') {
        keep.push(!!defines[arg]);
        continue;
      }
      if (word === 'else') {
        if (!keep.length) throw new Error(`${file}: #else without #if`);
        keep.push(!keep.pop());
        continue;
      }
      if (word === 'endif') {
        if (!keep.length) throw new Error(`${file}: #endif without #if`);
        keep.pop();
        continue;
      }
      if (word === 'include') {
        if (active()) {
          const m = /^"([^"]+)"$/.exec(substitute(arg, defines, file));
          if (!m) throw new Error(`${file}: bad #include ${arg}`);
          expand(dir, m[1]!, defines, seen, out);
        }
        continue;
      }
      if (word === 'struct') {
        if (active() && !seen.has(`#struct ${arg}`)) {
          seen.add(`#struct ${arg}`);
          const struct = kernelUniform(arg);
          if (!struct)
            throw new Error(
              `${file}: #struct ${arg} is not a uniform struct of kernel-uniforms.ts (${kernelUniformNames().join(', ')})`,
            );
          out.push(struct.wgsl);
        }
        continue;
      }
      throw new Error(`${file}: unknown directive #${word}`);
    }
    if (active()) out.push(substitute(raw, defines, file));
  }
  if (keep.length) throw new Error(`${file}: #if without #endif`);
}

/**
 * The WGSL of `entry` (a path under shaders/, or under `dir`) with its includes expanded and
 * `defines` applied. A TYPE naming a ggml type also defines its block's word offsets on the GPU
 * (gpuBlockDefines).
 */
export function shaderSource(entry: string, defines: Defines = {}, dir = shadersDir()): string {
  const type = typeof defines.TYPE === 'string' ? ggmlTypeByName(defines.TYPE) : undefined;
  const out: string[] = [];
  expand(dir, entry, type ? { ...gpuBlockDefines(type), ...defines } : defines, new Set(), out);
  return out.join('\n');
}
