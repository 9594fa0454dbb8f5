/**
 * The pure half of `npm run bench:vs-llama`: medians of each engine's runs, Gufo's speed as a
 * ratio to llama.cpp's on the same file, and the table.
 */

/** One run of one engine: what `gufo bench --json` and llama-decode.mjs both print (Gufo adds the rest). */
export interface EngineRun {
  prefillTokS: number;
  decodeTokS: number;
  rooflineFraction?: number;
  dispatchesPerToken?: number;
}

/** Every run of one engine on one adapter. */
export interface Measured {
  /** Short name: the software driver's (lavapipe, swiftshader), or cpu for llama.cpp. */
  adapter: string;
  /** What the engine says it ran on (Dawn's adapter name, llama.cpp's thread count). */
  device: string;
  runs: EngineRun[];
}

export interface VsLlamaRow {
  engine: 'gufo' | 'llama.cpp';
  adapter: string;
  device: string;
  model: string;
  runs: number;
  prefillTokS: number;
  decodeTokS: number;
  /** This row's median over llama.cpp's median (1 for llama.cpp's own row). */
  prefillVsLlama: number;
  decodeVsLlama: number;
  /** Gufo's decode traffic as a fraction of its adapter's copy bandwidth; null for llama.cpp. */
  rooflineFraction: number | null;
  dispatchesPerToken: number | null;
}

/** The middle value (the mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of no values');
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function medianOf(runs: readonly EngineRun[], key: keyof EngineRun): number | null {
  const xs = runs.map((r) => r[key]).filter((x): x is number => typeof x === 'number');
  return xs.length === 0 ? null : median(xs);
}

/** One row per Gufo adapter, then llama.cpp's, each the median of its runs. */
export function vsLlamaRows(model: string, gufo: readonly Measured[], llama: Measured): VsLlamaRow[] {
  const llamaPrefill = median(llama.runs.map((r) => r.prefillTokS));
  const llamaDecode = median(llama.runs.map((r) => r.decodeTokS));
  const row = (engine: VsLlamaRow['engine'], m: Measured): VsLlamaRow => {
    const prefillTokS = median(m.runs.map((r) => r.prefillTokS));
    const decodeTokS = median(m.runs.map((r) => r.decodeTokS));
    return {
      engine,
      adapter: m.adapter,
      device: m.device,
      model,
      runs: m.runs.length,
      prefillTokS,
      decodeTokS,
      prefillVsLlama: prefillTokS / llamaPrefill,
      decodeVsLlama: decodeTokS / llamaDecode,
      rooflineFraction: medianOf(m.runs, 'rooflineFraction'),
      dispatchesPerToken: medianOf(m.runs, 'dispatchesPerToken'),
    };
  };
  return [...gufo.map((m) => row('gufo', m)), row('llama.cpp', llama)];
}

/** Tok/s with three significant digits, at least one decimal: 0.104, 1.34, 23.0, 412. */
function tokS(x: number): string {
  return x >= 100 ? x.toFixed(0) : x.toPrecision(3);
}

export function vsLlamaTable(rows: readonly VsLlamaRow[]): string {
  const head = [
    'engine',
    'adapter',
    'model',
    'prefill tok/s',
    'decode tok/s',
    'prefill ×llama',
    'decode ×llama',
    'roofline',
    'dispatches/token',
  ];
  const lines = rows.map((r) => [
    r.engine,
    r.adapter,
    r.model,
    tokS(r.prefillTokS),
    tokS(r.decodeTokS),
    `${r.prefillVsLlama.toFixed(2)}×`,
    `${r.decodeVsLlama.toFixed(2)}×`,
    r.rooflineFraction === null ? '' : `${(r.rooflineFraction * 100).toFixed(1)}%`,
    r.dispatchesPerToken === null ? '' : r.dispatchesPerToken.toFixed(0),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const devices = rows.map((r) => `${r.adapter}: ${r.device}, median of ${r.runs} run${r.runs === 1 ? '' : 's'}`);
  return [fmt(head), ...lines.map(fmt), '', ...devices].join('\n') + '\n';
}
