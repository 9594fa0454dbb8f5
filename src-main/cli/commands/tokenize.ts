import { readFileSync } from 'node:fs';
import { createTokenizer, readVocab, type Tokenizer } from '../../core/tokenizer/index';
import { decodeUtf8, isValidUtf8 } from '../../core/tokenizer/utf8';
import { openGguf } from '../../node/gguf-io';
import { CliError, printJson, type Command } from '../command';
import { fileProblem } from '../file-errors';

const HELP = `Usage: gufo tokenize <model> "<text>" [--special] [--bos] [--json]
       gufo tokenize <file.gguf> --in texts.jsonl [--special] [--bos] [--json]

Tokenizes text with the model's own vocabulary exactly as llama.cpp does (llama_tokenize).
Supported tokenizers: llama (SentencePiece), gpt2 (byte-level BPE), bert (WordPiece).
Put -- before a text that starts with "-".

Options:
  --special   match special-token texts such as "<|im_end|>" (llama.cpp's parse_special);
              user-defined tokens are matched either way
  --bos       add BOS / EOS as the vocabulary asks (llama.cpp's add_special: BOS only when
              tokenizer.ggml.add_bos_token is true, EOS when add_eos_token is; BERT: [CLS] ... [SEP])
  --in FILE   tokenize each line of FILE, one JSON string per line (blank lines are skipped)
  --json      one JSON document on stdout: { "ids": [...], "pieces": [...] } for one text,
              [{ "ids": [...] }, ...] for --in, in input order

A piece is the token's text as llama.cpp renders it (llama_token_to_piece, special tokens shown);
bytes that are not complete UTF-8 show as U+FFFD.
`;

function readLines(path: string): string[] {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${fileProblem(err)}`);
  }
  const texts: string[] = [];
  raw.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new CliError(`${path}:${i + 1}: not JSON (each line must be one JSON string)`);
    }
    if (typeof value !== 'string') throw new CliError(`${path}:${i + 1}: expected a JSON string, got ${typeof value}`);
    texts.push(value);
  });
  return texts;
}

function renderTokens(tok: Tokenizer, ids: number[]): string {
  // Pieces that are not whole UTF-8 characters (byte tokens) show as their bytes, <0xF0>.
  const pieces = ids.map((id) => {
    const bytes = tok.tokenToPiece(id, { renderSpecial: true });
    if (isValidUtf8(bytes)) return JSON.stringify(decodeUtf8(bytes));
    return Array.from(bytes, (b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`).join('');
  });
  const width = Math.max(1, ...ids.map((id) => String(id).length));
  const lines = ids.map((id, i) => `  ${String(id).padStart(width)}  ${pieces[i]}`);
  return [`${ids.length} token${ids.length === 1 ? '' : 's'}`, ...lines].join('\n');
}

export const tokenizeCommand: Command = {
  help: HELP,
  modelArgs: [0],
  options: {
    in: { type: 'string' },
    special: { type: 'boolean' },
    bos: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  run(args) {
    const [path, text, ...extra] = args.positionals;
    const input = args.values.in;
    if (!path) throw new CliError('expected a GGUF file (see gufo tokenize --help)');
    if (extra.length > 0) throw new CliError('expected one text; quote it (see gufo tokenize --help)');
    if (input !== undefined && text !== undefined) throw new CliError('give either a text or --in FILE, not both');
    if (input === undefined && text === undefined)
      throw new CliError('expected a text or --in FILE (see gufo tokenize --help)');
    if (input !== undefined && typeof input !== 'string') throw new CliError('--in needs a file');
    const texts = input !== undefined ? readLines(input) : undefined;
    const options = { parseSpecial: args.values.special === true, addSpecial: args.values.bos === true };
    const { gguf, file } = openGguf(path);
    try {
      const tok = createTokenizer(readVocab(gguf));
      if (texts) {
        const results = texts.map((t) => tok.tokenize(t, options));
        if (args.values.json) printJson(results.map((ids) => ({ ids })));
        else process.stdout.write(results.map((ids) => ids.join(' ') + '\n').join(''));
        return;
      }
      const ids = tok.tokenize(text!, options);
      if (args.values.json) {
        const pieces = ids.map((id) => decodeUtf8(tok.tokenToPiece(id, { renderSpecial: true })));
        printJson({ ids, pieces });
      } else process.stdout.write(renderTokens(tok, ids) + '\n');
    } finally {
      file.close();
    }
  },
};
