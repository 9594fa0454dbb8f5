/**
 * A command's model argument: a GGUF file's path, or a model of the library by a name `gufo models`
 * prints (Ollama's "name:tag", with or without ":latest"; the Hugging Face cache's "org/repo/file";
 * the file name with or without ".gguf"; the OpenAI API's id), any case. Every command that takes a
 * model resolves it here, through the same library (database, folders, other apps' stores) as the app.
 */
import { statSync } from 'node:fs';
import { basename, isAbsolute } from 'node:path';
import type { ModelEntry } from '../../src-preload/api';
import { servedModels, type ServedModel } from '../backend/openai/model-ids';
import { closest, nameDistance, orList } from './closest';
import { CliError, type ModelArgs } from './command';
import { fileProblem } from './file-errors';

/**
 * The positionals with those at `which` (indices, or every one) resolved to files' paths; the
 * library is opened once, and only when an argument is not a file.
 */
export async function resolveModelArgs(positionals: readonly string[], which: ModelArgs): Promise<string[]> {
  const resolved = positionals.map((arg, i) => (which === 'all' || which.includes(i) ? fileAt(arg) : arg));
  if (resolved.every((r): r is string => r !== null)) return resolved;
  // Loaded only here: the back end pulls in packages (the template engine) that a command given
  // files never needs, and the device kit does not carry.
  const { withLibrary } = await import('./library-backend');
  const entries = await withLibrary(({ api }) => api.listModels());
  return resolved.map((r, i) => r ?? pathOf(positionals[i]!, entries));
}

/** `arg` when it is a file; null when no file has that name (it may be a library name); a CliError otherwise. */
function fileAt(arg: string): string | null {
  let info;
  try {
    info = statSync(arg);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new CliError(`${arg}: ${fileProblem(err)}`);
    // "./x.gguf", "/models/x.gguf": a path, which no library name looks like.
    if (isAbsolute(arg) || /^\.\.?[\\/]/.test(arg)) throw new CliError(`${arg}: no such file`);
    return null;
  }
  if (info.isDirectory()) throw new CliError(`${arg} is a folder, not a GGUF file`);
  return arg;
}

/** The path of the model `name` names among `entries`; a CliError saying what is wrong otherwise. */
export function pathOf(name: string, entries: readonly ModelEntry[]): string {
  const served = servedModels(entries);
  const query = name.toLowerCase();
  const matches = served.filter((m) => namesOf(m).includes(query));
  if (matches.length > 1) {
    const listed = matches.map((m) => m.entry.path).join(', ');
    throw new CliError(`${name} names ${matches.length} models; give the path of one: ${listed}`);
  }
  const [match] = matches;
  if (!match) throw new CliError(notFound(name, served));
  if (match.entry.error !== null) throw new CliError(match.entry.error);
  return match.entry.path;
}

/** The model's name as `gufo models` prints it, or its API id where several models share that name. */
function shownName({ id, entry }: ServedModel): string {
  return id === entry.name.toLowerCase() ? entry.name : id;
}

/** Every name a model answers to, lower-cased. */
function namesOf({ id, entry }: ServedModel): string[] {
  const names = [id, entry.name, entry.fileName];
  for (const location of entry.locations) {
    if (location.label !== null) names.push(location.label);
    names.push(basename(location.path));
  }
  const all = names.map((n) => n.toLowerCase());
  for (const n of [...all]) {
    if (n.endsWith('.gguf')) all.push(n.slice(0, -'.gguf'.length));
    if (n.endsWith(':latest')) all.push(n.slice(0, -':latest'.length));
  }
  return [...new Set(all)];
}

/** "no model named X; did you mean A, B or C?" with the closest names, or where to look when none is close. */
function notFound(name: string, served: readonly ServedModel[]): string {
  const query = name.toLowerCase().replace(/\.gguf$/, '');
  const close = closest(query, served, shownName, (m) => Math.min(...namesOf(m).map((n) => nameDistance(query, n))));
  if (close.length === 0)
    return `no model named ${name}, and no such file (gufo models lists the library: ${served.length} models)`;
  return `no model named ${name}; did you mean ${orList(close)}?`;
}
