/**
 * `npm run bench -- paced-waits [--model FILE] [--adapter lavapipe|swiftshader] [-p 64] [-n 32] [-d 0] [--runs 3] [--beside N] [--json]`
 *
 * What pacing the engine's waits for the GPU (gpu/paced-wait.ts: sleep through most of a wait
 * rather than poll Dawn from the main thread throughout) gives on a CPU adapter, whose kernels run
 * on the same cores as that polling: `gufo bench FILE --json` with GUFO_PACED_WAITS=1 against =0,
 * alternating so that machine noise hits both; medians of --runs each, and their ratio. Default
 * model: stories260K. `--beside N` runs N more of the same bench at the same time (a busy machine:
 * a server's other engines, a test suite), each run's speeds then the median of all 1 + N.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LAVAPIPE_ICD, SWIFTSHADER_ICD } from '../../src-main/engine/gpu/software-driver';
import { STORIES_260K } from '../../test/support/paths';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ADAPTERS: Record<string, string> = { lavapipe: LAVAPIPE_ICD, swiftshader: SWIFTSHADER_ICD };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

interface Speeds {
  prefillTokS: number;
  decodeTokS: number;
}

/** The medians of each speed. */
const side = (s: Speeds[]): Speeds => ({
  prefillTokS: median(s.map((x) => x.prefillTokS)),
  decodeTokS: median(s.map((x) => x.decodeTokS)),
});

export async function benchPacedWaits({ json, args }: { json: boolean; args: readonly string[] }): Promise<void> {
  const { values } = parseArgs({
    args: args.filter((a) => a !== 'paced-waits' && a !== '--json'),
    options: {
      model: { type: 'string', default: STORIES_260K },
      adapter: { type: 'string', default: 'lavapipe' },
      p: { type: 'string', short: 'p', default: '64' },
      n: { type: 'string', short: 'n', default: '32' },
      d: { type: 'string', short: 'd', default: '0' },
      runs: { type: 'string', default: '3' },
      beside: { type: 'string', default: '0' },
    },
  });
  const icd = ADAPTERS[values.adapter];
  if (!icd) throw new Error(`--adapter ${values.adapter}: expected one of ${Object.keys(ADAPTERS).join(', ')}`);
  const runs = Number(values.runs);
  if (!(Number.isInteger(runs) && runs >= 1)) throw new Error(`--runs ${values.runs}: expected a whole number ≥ 1`);
  const beside = Number(values.beside);
  if (!(Number.isInteger(beside) && beside >= 0))
    throw new Error(`--beside ${values.beside}: expected a whole number ≥ 0`);

  const benchOnce = (paced: boolean): Promise<Speeds> =>
    new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ['bin/gufo.mjs', 'bench', values.model, '-p', values.p, '-n', values.n, '-d', values.d, '--json'],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, GUFO_DEV: '1', VK_ICD_FILENAMES: icd, GUFO_PACED_WAITS: paced ? '1' : '0' },
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        if (code !== 0) reject(new Error(`gufo bench failed: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
        else resolve(JSON.parse(stdout) as Speeds);
      });
    });
  // 1 + beside benches at once; the run's speeds are the median of theirs.
  const bench = async (paced: boolean): Promise<Speeds> =>
    side(await Promise.all(Array.from({ length: 1 + beside }, () => benchOnce(paced))));
  const paced: Speeds[] = [];
  const polled: Speeds[] = [];
  for (let i = 0; i < runs; i++) {
    process.stderr.write(`run ${i + 1} of ${runs}\n`);
    polled.push(await bench(false));
    paced.push(await bench(true));
  }
  const result = {
    suite: 'paced-waits',
    model: values.model,
    adapter: values.adapter,
    depth: Number(values.d),
    runs,
    beside,
    polled: side(polled),
    paced: side(paced),
    prefillRatio: side(paced).prefillTokS / side(polled).prefillTokS,
    decodeRatio: side(paced).decodeTokS / side(polled).decodeTokS,
  };
  if (json) console.log(JSON.stringify(result, null, 2));
  else {
    const busy = beside > 0 ? `, ${beside} more at once` : '';
    console.log(
      `${values.model} on ${values.adapter}, -p ${values.p} -n ${values.n} -d ${values.d}${busy}, medians of ${runs}`,
    );
    console.log('waits              prefill tok/s   decode tok/s');
    for (const [name, s] of [
      ['polled (=0)', result.polled],
      ['paced (=1)', result.paced],
    ] as const) {
      console.log(
        `${name.padEnd(18)} ${s.prefillTokS.toFixed(1).padStart(13)} ${s.decodeTokS.toFixed(2).padStart(14)}`,
      );
    }
    console.log(
      `paced / polled     ${result.prefillRatio.toFixed(2).padStart(13)} ${result.decodeRatio.toFixed(2).padStart(14)}`,
    );
  }
}
