/**
 * One side of `npm run bench -- compile`, in a process of its own (a fresh device, nothing
 * compiled yet): loads MODEL and prints { cpuMs, wallMs } of the load on stdout. CPU time counts
 * Dawn's and the driver's threads too; on a busy machine it is the steadier figure.
 */
import { Engine } from '../../src-main/engine/engine';

const [model] = process.argv.slice(2);
if (!model) throw new Error('usage: compile-child.ts MODEL');
const engine = await Engine.open();
try {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await engine.load(model, { ctx: 64 });
  const cpu = process.cpuUsage(cpuBefore);
  console.log(JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - started }));
} finally {
  engine.destroy();
}
