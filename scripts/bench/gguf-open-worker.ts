/**
 * One GGUF open in a fresh process, so its peak RSS is not polluted by other runs:
 *   node --import tsx scripts/bench/gguf-open-worker.ts <ours|ours-full|hf> <file> <runs>
 * `ours` is Gufo's lazy open (string arrays stay undecoded bytes); `ours-full` also decodes every
 * string, as `hf` (@huggingface/gguf) does, so that pair compares like for like.
 * Prints one JSON line: { maxRssBytes, baselineRssBytes, ms, kvs, tensors } or { error }.
 * The first parse is measured for memory (and doubles as the JIT warm-up); `ms` is the median
 * of the `runs` parses after it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { gguf } from '@huggingface/gguf';
import { GgufType, type GgufArray } from '../../src-main/core/gguf/values';
import { openGguf } from '../../src-main/node/gguf-io';

type Counts = { kvs: number; tensors: number };
/** Ours opens synchronously; @huggingface/gguf's parser is async. */
type Parse = (path: string) => Counts | Promise<Counts>;

const PARSERS: Record<string, Parse> = {
  ours(path) {
    const { gguf: g, file } = openGguf(path);
    try {
      return { kvs: g.kvs.length, tensors: g.tensors.length };
    } finally {
      file.close();
    }
  },
  'ours-full'(path) {
    const { gguf: g, file } = openGguf(path);
    try {
      for (const kv of g.kvs) if (kv.type === GgufType.ARRAY) decodeStrings(kv.value as GgufArray);
      return { kvs: g.kvs.length, tensors: g.tensors.length };
    } finally {
      file.close();
    }
  },
  async hf(path) {
    const r = await gguf(path, { allowLocalFile: true });
    return { kvs: Object.keys(r.metadata).length, tensors: r.tensorInfos.length };
  },
};

/** Turns every string of an array (nested ones included) into a JS string, as a full decode does. */
function decodeStrings(array: GgufArray): void {
  if (array.itemType === GgufType.STRING) array.items.toArray();
  else if (array.itemType === GgufType.ARRAY) array.items.forEach(decodeStrings);
}

const PROC_STATUS = '/proc/self/status';

/**
 * Resets the peak RSS to the current RSS where Linux allows it, and returns the current RSS.
 * Needed because getrusage's maxRSS in a child starts at the parent's RSS at fork time (measured:
 * a child of a 400 MB parent reports 400 MB), and it would also include tsx's start-up peak.
 */
function resetPeakRss(): number {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // Not Linux: the peak then also covers start-up, so small deltas read high.
  }
  return process.memoryUsage().rss;
}

/** Peak RSS: VmHWM (this process's own high-water mark) on Linux, getrusage elsewhere. */
function peakRss(): number {
  try {
    const kb = /VmHWM:\s*(\d+) kB/.exec(readFileSync(PROC_STATUS, 'utf8'))?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {
    // fall through
  }
  return process.resourceUsage().maxRSS * 1024;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

async function main(): Promise<void> {
  const [name = '', path = '', runsArg = '7'] = process.argv.slice(2);
  const parse = PARSERS[name];
  if (!parse || !path) throw new Error(`usage: gguf-open-worker.ts <${Object.keys(PARSERS).join('|')}> <file> [runs]`);
  const baselineRssBytes = resetPeakRss();
  const counts = await parse(path);
  const maxRssBytes = peakRss();
  const times: number[] = [];
  for (let i = 0; i < Number(runsArg); i++) {
    const start = performance.now();
    await parse(path);
    times.push(performance.now() - start);
  }
  console.log(JSON.stringify({ maxRssBytes, baselineRssBytes, ms: median(times), ...counts }));
}

// A parser rejecting the file is a result, not a crash: report it and exit normally.
main().catch((err: unknown) =>
  console.log(JSON.stringify({ error: err instanceof Error ? err.message : String(err) })),
);
