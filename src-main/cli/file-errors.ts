/**
 * Node's file errors ("ENOENT: no such file or directory, open 'x'") as sentences naming the file:
 * what `gufo` prints instead of an errno's text.
 */

const PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'is a folder, not a file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ELOOP: 'too many levels of symbolic links',
  ENOSPC: 'no space left on the disk',
  EROFS: 'on a read-only file system',
  EEXIST: 'already exists',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'the name is too long',
};

/** What is wrong, in words ("permission denied"); the error's own message for other errors. */
export function fileProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined && Object.hasOwn(PROBLEMS, code)) return PROBLEMS[code]!;
  return err instanceof Error ? err.message : String(err);
}

/**
 * The one line `gufo` prints for an error: a file error of Node's as "<path>: <problem>", any
 * other error's message as it is.
 */
export function errorLine(err: unknown): string {
  const { code, path } = (err ?? {}) as NodeJS.ErrnoException;
  if (typeof path === 'string' && code !== undefined && Object.hasOwn(PROBLEMS, code))
    return `${path}: ${PROBLEMS[code]}`;
  return err instanceof Error ? err.message : String(err);
}
