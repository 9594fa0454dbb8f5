/**
 * Ollama's Modelfile as older clients send it to /api/create (`modelfile`): FROM, TEMPLATE, SYSTEM,
 * PARAMETER and LICENSE, each argument bare to the end of the line, "quoted" or """on several
 * lines"""; `#` starts a comment. ADAPTER and MESSAGE are refused: Gufo has neither.
 */
import { invalidParam } from '../openai/errors';

export interface ParsedModelfile {
  from: string | null;
  template: string | null;
  system: string | null;
  license: string | null;
  parameters: Record<string, unknown>;
}

export function parseModelfile(text: string): ParsedModelfile {
  const parsed: ParsedModelfile = { from: null, template: null, system: null, license: null, parameters: {} };
  let rest = text;
  while (rest !== '') {
    const line = /^[ \t]*(\S*)[ \t]*/.exec(rest)!;
    const word = line[1]!;
    rest = rest.slice(line[0].length);
    if (word === '' || word.startsWith('#')) {
      rest = rest.slice(lineEnd(rest));
      continue;
    }
    const instruction = word.toUpperCase();
    let argument: string;
    [argument, rest] = readArgument(rest, instruction);
    switch (instruction) {
      case 'FROM':
        parsed.from = argument;
        break;
      case 'TEMPLATE':
        parsed.template = argument;
        break;
      case 'SYSTEM':
        parsed.system = argument;
        break;
      case 'LICENSE':
        parsed.license = argument;
        break;
      case 'PARAMETER': {
        const [, name, value] = /^(\S+)\s+([\s\S]+)$/.exec(argument) ?? [];
        if (!name || value === undefined) throw modelfileError(`PARAMETER ${argument}: give a name and a value`);
        addParameter(parsed.parameters, name, value);
        break;
      }
      case 'ADAPTER':
      case 'MESSAGE':
        throw modelfileError(
          `${instruction}: Gufo has no ${instruction === 'ADAPTER' ? 'LoRA adapters' : 'stored messages'}`,
        );
      default:
        throw modelfileError(`unknown instruction "${word}" (Gufo reads FROM, TEMPLATE, SYSTEM, PARAMETER, LICENSE)`);
    }
  }
  return parsed;
}

/** A value as Ollama's options take it: numbers and booleans as such, `stop` a list (PARAMETER stop repeats). */
export function addParameter(parameters: Record<string, unknown>, name: string, text: string): void {
  const value = /^"(.*)"$/s.exec(text)?.[1] ?? text;
  if (name === 'stop') {
    parameters.stop = [...((parameters.stop as string[] | undefined) ?? []), value];
    return;
  }
  const number = Number(value);
  parameters[name] =
    value === 'true' ? true : value === 'false' ? false : value.trim() !== '' && !Number.isNaN(number) ? number : value;
}

function readArgument(rest: string, instruction: string): [string, string] {
  if (rest.startsWith('"""')) {
    const end = rest.indexOf('"""', 3);
    if (end < 0) throw modelfileError(`${instruction}: a """ is not closed`);
    return [rest.slice(3, end), rest.slice(end + 3).replace(/^[^\n]*\n?/, '')];
  }
  const end = lineEnd(rest);
  const value = rest.slice(0, end).trim();
  const quoted = /^"(.*)"$/.exec(value);
  return [quoted ? quoted[1]! : value, rest.slice(end)];
}

/** Where the line ends, its newline included. */
function lineEnd(rest: string): number {
  const newline = rest.indexOf('\n');
  return newline < 0 ? rest.length : newline + 1;
}

function modelfileError(message: string) {
  return invalidParam('modelfile', `Modelfile: ${message}`);
}
