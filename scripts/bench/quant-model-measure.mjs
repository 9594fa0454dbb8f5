// Preloaded (node --import) into the process that runs `gufo quantize` for `bench:quant -- --model`
// (quant-model.ts): when that process exits cleanly it prints, as its last stdout line,
// { seconds, cpuSeconds, peakRssBytes } of the whole process, from Node's start (the CLI's own
// start-up included, as a user pays it), worker threads included.
process.on('exit', (code) => {
  if (code !== 0) return;
  const cpu = process.cpuUsage();
  const result = {
    seconds: performance.now() / 1000,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
});
