import { CliError, parseCommandArgs, type Command } from './command';
import { dequantCommand } from './commands/dequant';
import { inspectCommand } from './commands/inspect';
import { quantizeCommand } from './commands/quantize';
import { runCommand } from './commands/run';
import { benchCommand } from './commands/bench';
import { chatCommand } from './commands/chat';
import { serveCommand } from './commands/serve';
import { tokenizeCommand } from './commands/tokenize';
import { templateCommand } from './commands/template';
import { perplexityCommand } from './commands/perplexity';
import { kldCommand } from './commands/kld';
import { tensorErrorCommand } from './commands/tensor-error';
import { modelsCommand } from './commands/models';
import { pullCommand } from './commands/pull';
import { ollamaCommand } from './commands/ollama';

const commands: Command[] = [inspectCommand, quantizeCommand, dequantCommand, serveCommand, templateCommand, tokenizeCommand, runCommand, chatCommand, benchCommand, perplexityCommand, kldCommand, tensorErrorCommand, modelsCommand, pullCommand, ollamaCommand];

function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'Usage: gufo <command> [options]',
    '',
    'Gufo: local LLMs in GGUF files. Inspect, chat, benchmark and re-quantize, offline.',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
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
  const command = commands.find((c) => c.name === name);
  if (!command) throw new CliError(`unknown command "${name}" (see gufo --help)`);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(command.help.trimEnd() + '\n');
    return 0;
  }
  await command.run(parseCommandArgs(command, rest));
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
