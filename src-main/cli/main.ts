import { CliError, parseCommandArgs } from './command';
import { COMMANDS } from './command-list';

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: gufo <command> [options]',
    '',
    'Gufo: local LLMs in GGUF files. Inspect, chat, benchmark and re-quantize, offline.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `gufo <command> --help` for the options of one command.',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name === undefined ? 1 : 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) throw new CliError(`unknown command "${name}" (see gufo --help)`);
  const command = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(command.help.trimEnd() + '\n');
    return 0;
  }
  await command.run(parseCommandArgs(name, command, rest));
  return 0;
}

// Errors end the command with one line on stderr; GUFO_DEBUG=1 adds the stack trace.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`gufo: ${err instanceof Error ? err.message : String(err)}\n`);
    if (process.env.GUFO_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    process.exitCode = 1;
  },
);
