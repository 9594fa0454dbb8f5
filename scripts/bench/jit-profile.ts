/**
 * `npm run bench:jit-profile -- [--warmup 25] [--seconds 10] [--out /tmp/jit-profile] -- COMMAND ARGS...`
 *
 * Where SwiftShader's time goes, instruction by instruction: its Subzero backend compiles each
 * kernel into anonymous memory that perf cannot name. This runs COMMAND (e.g. `npx tsx
 * scripts/bench/attention.ts --depth 4096 --runs 400`, with VK_ICD_FILENAMES set to SwiftShader),
 * waits --warmup seconds for its kernels to compile, samples the process that holds SwiftShader's
 * JIT code for --seconds (`perf record -e cpu-clock`), copies that code out of the process (gdb)
 * and disassembles it (objdump). Prints each JIT region's share of the samples and, for the
 * hottest, its stack frame, code size and the share of its samples by kind of instruction:
 * spills (stack loads and stores), constants (Subzero loads each vector constant's address, then
 * the constant), per-lane loads (a load whose address differs per lane is a loop over the lanes:
 * pextrd, movss, insertps), float arithmetic and integer SIMD. Writes OUT.annot: the hottest
 * region's disassembly with each instruction's samples. Needs Debian's linux-perf, gdb and
 * binutils; profiling the process needs root (or kernel.perf_event_paranoid ≤ 1 and ptrace).
 */
import { spawn, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: {
    warmup: { type: 'string', default: '25' },
    seconds: { type: 'string', default: '10' },
    out: { type: 'string', default: '/tmp/jit-profile' },
  },
  allowPositionals: true,
});
if (positionals.length === 0)
  throw new Error('usage: bench:jit-profile [--warmup S] [--seconds S] [--out PREFIX] -- COMMAND ARGS...');
const out = values.out;
const sleep = (s: number) => new Promise((done) => setTimeout(done, s * 1000));
const run = (file: string, args: string[]) =>
  execFileSync(file, args, { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });

// Its own process group, so that stopping it stops what it started (npx, tsx) too.
const child = spawn(positionals[0]!, positionals.slice(1), { stdio: 'ignore', detached: true });
const stop = () => {
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    // it has ended
  }
};
process.once('exit', stop); // also where perf, gdb or objdump fails
await sleep(Number(values.warmup));

// The process under COMMAND whose memory holds SwiftShader's JIT code.
const parents = new Map<number, number>();
for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
  const stat = readIfThere(`/proc/${name}/stat`);
  if (stat) parents.set(Number(name), Number(stat.split(') ')[1]!.split(' ')[1]));
}
const descends = (pid: number): boolean => pid === child.pid || (pid > 1 && descends(parents.get(pid) ?? 1));
const jitMapped = (pid: number) => readIfThere(`/proc/${pid}/maps`)?.includes('swiftshader_jit') ?? false;
const pid = [...parents.keys()].find((p) => descends(p) && jitMapped(p));
if (pid === undefined) {
  stop();
  throw new Error(
    `no process under "${positionals.join(' ')}" holds SwiftShader JIT code after ${values.warmup} s (is VK_ICD_FILENAMES SwiftShader's?)`,
  );
}

run('perf', [
  'record',
  '-q',
  '-e',
  'cpu-clock',
  '-F',
  '4000',
  '-p',
  String(pid),
  '-o',
  `${out}.data`,
  '--',
  'sleep',
  values.seconds,
]);
const samples = new Map<number, number>();
for (const line of run('perf', ['script', '-i', `${out}.data`, '-F', 'ip']).split('\n')) {
  const ip = parseInt(line, 16);
  if (line.trim()) samples.set(ip, (samples.get(ip) ?? 0) + 1);
}
const regions = readFileSync(`/proc/${pid}/maps`, 'utf8')
  .split('\n')
  .filter((l) => l.includes('swiftshader_jit') && l.split(' ')[1]!.includes('x'))
  .map(
    (l) =>
      l
        .split(' ')[0]!
        .split('-')
        .map((a) => parseInt(a, 16)) as [number, number],
  );
const total = [...samples.values()].reduce((a, b) => a + b, 0);
const inRegion = ([lo, hi]: [number, number]) =>
  [...samples].filter(([ip]) => ip >= lo && ip < hi).reduce((a, [, n]) => a + n, 0);
const ranked = regions.map((r) => ({ r, n: inRegion(r) })).sort((a, b) => b.n - a.n);
const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}%`;
console.log(`${total} samples; SwiftShader JIT regions by share:`);
for (const { r, n } of ranked.slice(0, 5))
  console.log(`  ${pct(n, total).padStart(6)}  ${(r[1] - r[0]) >> 10} KiB at 0x${r[0].toString(16)}`);

const [lo, hi] = ranked[0]!.r;
run('gdb', ['-p', String(pid), '-batch', '-ex', `dump binary memory ${out}.bin ${lo} ${hi}`]);
stop();
const listing = run('objdump', ['-D', '-b', 'binary', '-m', 'i386:x86-64', `--adjust-vma=${lo}`, `${out}.bin`]);
const kinds = new Map<string, number>();
const annotated: string[] = [];
let frame = '?';
for (const line of listing.split('\n')) {
  const [address, , instruction] = line.split('\t');
  if (!instruction || !/^\s*[0-9a-f]+:$/.test(address!)) continue;
  const n = samples.get(parseInt(address!, 16)) ?? 0;
  annotated.push(`${String(n).padStart(6)} ${line}`);
  if (frame === '?') frame = /sub +\$0x([0-9a-f]+),%rsp/.exec(instruction)?.[1] ?? frame;
  const kind = kindOf(instruction.trim());
  kinds.set(kind, (kinds.get(kind) ?? 0) + n);
}
writeFileSync(`${out}.annot`, annotated.join('\n') + '\n');
const hot = ranked[0]!.n;
console.log(
  `hottest region: ${(hi - lo) >> 10} KiB of code, stack frame ${frame === '?' ? '?' : parseInt(frame, 16)} bytes; its samples by kind:`,
);
for (const [kind, n] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`  ${pct(n, hot).padStart(6)}  ${kind}`);
console.log(`annotated disassembly: ${out}.annot`);

/** A /proc file, or undefined where its process ended while listed. */
function readIfThere(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function kindOf(instruction: string): string {
  const op = instruction.split(/\s+/)[0]!;
  if (op.startsWith('mov') && instruction.includes('(%rsp)'))
    return instruction.endsWith('(%rsp)') ? 'spill store' : 'spill load';
  if (op === 'mov' && /^mov\s+\$0x[0-9a-f]+,%e/.test(instruction)) return 'constant (address)';
  if (op === 'movups' && /\(%r[a-d]x\)/.test(instruction)) return 'constant (load)';
  if (['pextrd', 'pinsrd', 'insertps', 'movss', 'movslq', 'movd'].includes(op)) return 'per-lane load';
  if (['mulps', 'addps', 'subps', 'divps', 'minps', 'maxps'].includes(op)) return 'float arithmetic';
  if (op === 'movups' || op === 'movaps') return 'register move';
  if (/^(cmp|test|j|movmskps)/.test(op)) return 'branch and mask';
  if (op.startsWith('p')) return 'integer SIMD';
  return 'other';
}
