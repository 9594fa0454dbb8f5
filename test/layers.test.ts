/**
 * The layer rules of docs/architecture.md, checked on every import (static, dynamic and
 * type-only) of every source file: a forbidden edge or an import circle fails here, not in review.
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { builtinModules } from 'node:module';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

type Layer =
  'contract' | 'core' | 'node' | 'engine' | 'engine-wire' | 'backend' | 'cli' | 'app' | 'preload' | 'renderer';

/**
 * Which layers each layer may import. `engine-wire` is the engine's door for hosts: src-main/engine-wire/
 * (host.ts, protocol.ts, and driver-noise.ts: the filter hosts put on the engine's stderr). The contract (src-preload/api: the UI's types and method lists) is the
 * lowest shared layer: it imports nothing, and everything may read it except core.
 */
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  contract: [],
  core: [],
  node: ['core', 'contract'],
  'engine-wire': ['core', 'contract'],
  engine: ['core', 'node', 'engine-wire', 'contract'],
  backend: ['core', 'node', 'engine-wire', 'contract'],
  cli: ['core', 'node', 'engine-wire', 'backend', 'contract'],
  app: ['core', 'node', 'engine-wire', 'backend', 'contract'],
  preload: ['contract'],
  renderer: ['contract'],
};

/** Packages that tie code to a platform; each layer names the ones it may use. */
// The MCP SDK starts processes and opens sockets: its clients live in node/mcp/ only.
const PLATFORM_PACKAGES = [
  'electron',
  'webgpu',
  'koffi',
  'better-sqlite3',
  'node-llama-cpp',
  '@modelcontextprotocol/sdk',
];
const MAY_USE: Record<Layer, { node: boolean; packages: readonly string[] }> = {
  contract: { node: false, packages: [] },
  core: { node: false, packages: [] },
  node: { node: true, packages: ['koffi', 'better-sqlite3', '@modelcontextprotocol/sdk'] },
  'engine-wire': { node: true, packages: [] },
  engine: { node: true, packages: ['webgpu'] },
  backend: { node: true, packages: [] },
  cli: { node: true, packages: [] },
  app: { node: true, packages: ['electron'] },
  preload: { node: false, packages: ['electron'] },
  renderer: { node: false, packages: [] },
};

function layerOf(file: string): Layer | null {
  const path = relative(ROOT, file);
  if (path.startsWith('src-preload/api/')) return 'contract';
  if (path.startsWith('src-preload/')) return 'preload';
  if (path.startsWith('src-renderer/')) return 'renderer';
  const folder = /^src-main\/([\w-]+)\//.exec(path)?.[1];
  return folder && folder in MAY_IMPORT ? (folder as Layer) : null;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|svelte)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

function scriptText(file: string): string {
  const text = readFileSync(file, 'utf8');
  if (!file.endsWith('.svelte')) return text;
  return [...text.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]).join('\n');
}

function resolveRelative(from: string, spec: string): string {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return base;
}

interface Edge {
  from: string;
  spec: string;
  /** The imported file, for a relative import. */
  to: string | null;
}

const files = ['src-main', 'src-preload', 'src-renderer'].flatMap((dir) => sourceFiles(join(ROOT, dir)));
const edges: Edge[] = files.flatMap((from) =>
  ts.preProcessFile(scriptText(from), true, true).importedFiles.map(({ fileName: spec }) => ({
    from,
    spec,
    to: spec.startsWith('.') ? resolveRelative(from, spec) : null,
  })),
);
const show = (e: Edge) => `${relative(ROOT, e.from)} imports ${e.spec}`;

describe('layer rules', () => {
  it('reads the imports of every layer', () => {
    const seen = new Set(files.map(layerOf));
    for (const layer of Object.keys(MAY_IMPORT)) expect(seen, layer).toContain(layer);
    expect(edges.length).toBeGreaterThan(500);
  });

  it('every import points to a layer the importer may use', () => {
    const wrong = edges.filter((e) => {
      const from = layerOf(e.from);
      if (!from || !e.to) return false;
      const to = layerOf(e.to);
      return to !== null && to !== from && !MAY_IMPORT[from].includes(to);
    });
    expect(wrong.map(show)).toEqual([]);
  });

  it('platform code stays out of the layers that must run anywhere', () => {
    const builtins = new Set(builtinModules);
    const wrong = edges.filter((e) => {
      const from = layerOf(e.from);
      if (!from || e.to) return false;
      const name = e.spec.startsWith('@') ? e.spec.split('/').slice(0, 2).join('/') : e.spec.split('/')[0]!;
      if (e.spec.startsWith('node:') || builtins.has(name)) return !MAY_USE[from].node;
      return PLATFORM_PACKAGES.includes(name) && !MAY_USE[from].packages.includes(name);
    });
    expect(wrong.map(show)).toEqual([]);
  });

  it('has no import circles', () => {
    const next = new Map<string, string[]>();
    for (const e of edges) if (e.to) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    // Tarjan's strongly connected components: any component of two or more files is a circle.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const circles: string[][] = [];
    const visit = (v: string) => {
      index.set(v, index.size);
      low.set(v, index.get(v)!);
      stack.push(v);
      onStack.add(v);
      for (const w of next.get(v) ?? []) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) !== index.get(v)) return;
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(relative(ROOT, w));
      } while (w !== v);
      if (component.length > 1) circles.push(component);
    };
    for (const file of files) if (!index.has(file)) visit(file);
    expect(circles).toEqual([]);
  });
});
