import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closest, orList } from './closest';

/** One `gufo <name>` subcommand (its name and summary are its entry in command-list.ts). */
export interface Command {
  /** Full text for `gufo <name> --help`. */
  help: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /**
   * The positionals that name a model (indices, or 'all'): each is a GGUF file's path or a library
   * name, resolved to a path (cli/model-arg.ts) before `run` sees it.
   */
  modelArgs?: ModelArgs;
  run(args: CommandArgs): void | Promise<void>;
}

/** The positionals of a command that name models: their indices, or all of them. */
export type ModelArgs = readonly number[] | 'all';

export interface CommandArgs {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

/**
 * Options several commands take, with the short names llama.cpp's tools give them, so that a
 * llama.cpp user's habits work: -c the context (llama-cli, llama-server, llama-perplexity), -f a
 * text file (llama-perplexity, llama-imatrix).
 */
export const CTX_OPTION = { type: 'string', short: 'c' } as const;
export const TEXT_FILE_OPTION = { type: 'string', short: 'f' } as const;

/** An error the user caused: printed as one line, no stack trace. */
export class CliError extends Error {}

export function parseCommandArgs(name: string, command: Command, argv: string[]): CommandArgs {
  try {
    const { positionals, values } = parseArgs({
      args: argv,
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
    return { positionals, values: values as CommandArgs['values'] };
  } catch (err) {
    throw new CliError(parseProblem(name, command.options, err as Error & { code?: string }));
  }
}

/** Node's parseArgs errors in Gufo's words: "unknown option --promt; did you mean --prompt?". */
function parseProblem(name: string, options: Command['options'], err: Error & { code?: string }): string {
  const help = `(see gufo ${name} --help)`;
  const unknown = /^Unknown option '([^']+)'/.exec(err.message);
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) {
    const given = unknown[1]!;
    const spellings = Object.entries(options).flatMap(([long, o]) => [
      `--${long}`,
      ...(o.short ? [`-${o.short}`] : []),
    ]);
    const close = closest(given, spellings, (s) => s);
    return close.length > 0
      ? `unknown option ${given}; did you mean ${orList(close)}?`
      : `unknown option ${given} ${help}`;
  }
  const missing = /^Option '(?:-\w, )?(--[^ ']+) <value>' argument missing/.exec(err.message);
  if (missing) return `${missing[1]} needs a value ${help}`;
  const flag = /^Option '(?:-\w, )?(--[^ ']+)' does not take an argument/.exec(err.message);
  if (flag) return `${flag[1]} takes no value ${help}`;
  return `${err.message} ${help}`;
}

/** A string option parsed as a non-negative integer, or the default when absent. */
export function integerOption(args: CommandArgs, name: string, fallback: number): number {
  const raw = args.values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || !Number.isSafeInteger(n)) {
    throw new CliError(`--${name} must be a non-negative integer, got "${String(raw)}"`);
  }
  return n;
}

/** Data goes to stdout; everything else (progress, logs) goes to stderr. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function log(message: string): void {
  process.stderr.write(message + '\n');
}
