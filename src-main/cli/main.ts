import { closest, orList } from './closest';
import { CliError, parseCommandArgs } from './command';
import { COMMANDS } from './command-list';
import { errorLine } from './file-errors';

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: gufo <command> [options]       gufo --version',
    '',
    'Gufo: local LLMs in GGUF files. Inspect, chat, benchmark and re-quantize, offline.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "A command that takes a model (<model>, <in.gguf>, ...) takes a GGUF file's path or a name that",
    "`gufo models` lists: Ollama's name:tag, org/repo/file, the file name with or without .gguf.",
    'Run `gufo <command> --help` for the options of one command.',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name === undefined ? 1 : 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`gufo ${await packageVersion()}\n`);
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    const close = closest(name, COMMANDS, (c) => c.name);
    if (close.length > 0) throw new CliError(`unknown command "${name}"; did you mean ${orList(close)}?`);
    throw new CliError(`unknown command "${name}" (see gufo --help)`);
  }
  const command = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(command.help.trimEnd() + '\n');
    return 0;
  }
  const args = parseCommandArgs(name, command, rest);
  if (command.modelArgs)
    args.positionals = await (await import('./model-arg')).resolveModelArgs(args.positionals, command.modelArgs);
  await command.run(args);
  return 0;
}

/** The version in the package's package.json (read only when asked, to keep --help's start short). */
async function packageVersion(): Promise<string> {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const { PACKAGE_ROOT } = await import('./package-root');
  return (JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

// Errors end the command with one line on stderr; GUFO_DEBUG=1 adds the stack trace.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`gufo: ${errorLine(err)}\n`);
    if (process.env.GUFO_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    process.exitCode = 1;
  },
);
