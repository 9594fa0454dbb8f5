/**
 * Every problem the GGUF layer finds in a file is a GgufError: it names the file, the field and
 * what is wrong, in one line, so the CLI and the UI can show it as it is.
 */
export class GgufError extends Error {
  override readonly name = 'GgufError';

  constructor(
    readonly file: string,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${file}: ${field}: ${problem}`);
  }
}
