/**
 * Event-loop benchmark (issue #14), `npm run bench:event-loop [--json]`: a real server on
 * 127.0.0.1 with stories260K, polled on GET /metrics and POST /api/listChats while it handles
 * nothing (the reference), one 8 MiB prompt to /v1/chat/completions, then six at once. Prints the
 * polls' p50/p99 per phase, their ratio to the reference, and the process's RSS growth.
 * The big prompts come from a child process (this file run with --send), so that building and
 * writing them is not counted against the server's event loop. Progress goes to stderr; with
 * --json one JSON document goes to stdout.
 */
import { fork } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_BODY_BYTES } from '../src-main/backend/openai/service';
import { startOpenAiTestServer } from '../test/backend/fixtures/openai-server';

const REFERENCE_MS = 3000;
const POLL_GAP_MS = 20;

interface Reply {
  status: number;
  ms: number;
}

function call(port: number, method: string, path: string, body?: string | Buffer): Promise<Reply> {
  const start = performance.now();
  return new Promise((done, fail) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => done({ status: res.statusCode!, ms: performance.now() - start }));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

/** Polls both probes until `until` settles (or for REFERENCE_MS with none); answers their latencies and the peak RSS. */
async function poll(port: number, until: Promise<unknown> | null) {
  const latencies: Record<'metrics' | 'api', number[]> = { metrics: [], api: [] };
  let busy = true;
  const stop = (until ?? new Promise((r) => setTimeout(r, REFERENCE_MS))).finally(() => (busy = false));
  let peakRss = process.memoryUsage.rss();
  while (busy) {
    const [metrics, api] = await Promise.all([
      call(port, 'GET', '/metrics'),
      call(port, 'POST', '/gufo/api/listChats', '[]'),
    ]);
    latencies.metrics.push(metrics.ms);
    latencies.api.push(api.ms);
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    await new Promise((r) => setTimeout(r, POLL_GAP_MS));
  }
  await stop;
  return { latencies, peakRss };
}

/** The child's side: sends `count` big prompts at once to the port, answers their replies to the parent. */
async function send(port: number, count: number): Promise<void> {
  // As large as the body limit allows, with room for the JSON around it.
  const story = 'Once upon a time there was a little girl named Lily. ';
  const content = story
    .repeat(Math.ceil(DEFAULT_MAX_BODY_BYTES / story.length))
    .slice(0, DEFAULT_MAX_BODY_BYTES - 1024);
  const body = Buffer.from(
    JSON.stringify({ model: 'stories260k', messages: [{ role: 'user', content }], max_tokens: 1 }),
  );
  process.send!('ready');
  await new Promise((go) => process.once('message', go));
  const replies = await Promise.all(
    Array.from({ length: count }, () => call(port, 'POST', '/v1/chat/completions', body)),
  );
  process.send!(replies);
}

/** `count` big prompts from a child process, started once its body is built. */
async function bigPrompts(port: number, count: number): Promise<() => Promise<Reply[]>> {
  const child = fork(fileURLToPath(import.meta.url), ['--send', String(port), String(count)], {
    execArgv: process.execArgv,
  });
  await new Promise((ready) => child.once('message', ready));
  return () => {
    const replies = new Promise<Reply[]>((done) => child.once('message', (m) => done(m as Reply[])));
    child.send('go');
    return replies.finally(() => child.kill());
  };
}

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  // The OpenAI tests' server: stories260K in a fresh data folder, /v1 on the UI's port.
  const t = await startOpenAiTestServer();
  const { port } = t.server;

  const phases: { name: string; prompts: number }[] = [
    { name: 'reference (idle)', prompts: 0 },
    { name: 'one 8 MiB prompt', prompts: 1 },
    { name: 'six 8 MiB prompts at once', prompts: 6 },
  ];
  const results = [];
  try {
    for (const phase of phases) {
      process.stderr.write(`${phase.name}...\n`);
      const start = phase.prompts > 0 ? await bigPrompts(port, phase.prompts) : null;
      const rssBefore = process.memoryUsage.rss();
      const started = performance.now();
      const load = start?.() ?? null;
      const { latencies, peakRss } = await poll(port, load);
      const replies = load ? await load : [];
      results.push({
        phase: phase.name,
        wallMs: Math.round(performance.now() - started),
        statuses: replies.map((r) => r.status),
        bigMs: replies.map((r) => Math.round(r.ms)),
        polls: latencies.metrics.length,
        metrics: { p50: percentile(latencies.metrics, 50), p99: percentile(latencies.metrics, 99) },
        api: { p50: percentile(latencies.api, 50), p99: percentile(latencies.api, 99) },
        rssGrowthMb: Math.round((peakRss - rssBefore) / 1e6),
      });
    }
  } finally {
    await t.close();
  }

  if (json) {
    process.stdout.write(JSON.stringify({ bench: 'event-loop', results }, null, 2) + '\n');
    return;
  }
  const ref = results[0]!;
  const f = (ms: number) => `${ms.toFixed(1)} ms`;
  const ratio = (ms: number, base: number) => `x${(ms / base).toFixed(1)}`;
  for (const r of results) {
    console.log(
      `${r.phase}: ${r.polls} polls in ${r.wallMs} ms${r.statuses.length ? `, big requests ${r.statuses.join(',')} in ${r.bigMs.join(',')} ms` : ''}, RSS +${r.rssGrowthMb} MB`,
    );
    console.log(
      `  GET /metrics       p50 ${f(r.metrics.p50)} (${ratio(r.metrics.p50, ref.metrics.p50)})  p99 ${f(r.metrics.p99)} (${ratio(r.metrics.p99, ref.metrics.p99)})`,
    );
    console.log(
      `  POST /api/listChats p50 ${f(r.api.p50)} (${ratio(r.api.p50, ref.api.p50)})  p99 ${f(r.api.p99)} (${ratio(r.api.p99, ref.api.p99)})`,
    );
  }
}

const sending = process.argv.indexOf('--send');
if (sending >= 0) await send(Number(process.argv[sending + 1]), Number(process.argv[sending + 2]));
else await main();
