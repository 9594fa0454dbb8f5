/**
 * Folders of .gguf files, read recursively: the user's folders, and the stores of apps that keep
 * models as plain files (LM Studio's publisher/repo/file.gguf, Jan, GPT4All).
 */
import { basename, relative, sep } from 'node:path';
import type { ModelSource } from '../../../src-preload/api';
import { findGgufFiles } from '../library/find-gguf-files';
import type { Discovery } from './found-model';
import { groupSplitSets } from './split-sets';

export async function discoverFolder(root: string, source: ModelSource): Promise<Discovery> {
  const { files, problems, folders } = await findGgufFiles([root]);
  const { grouped, problems: setProblems } = groupSplitSets(files);
  return {
    models: grouped.map(({ file, parts }) => ({
      path: file.path,
      parts,
      source,
      // An app's store names its models by where they sit in it (LM Studio: publisher/repo/file.gguf).
      label: source === 'folder' ? null : relative(root, file.foundAt).split(sep).join('/'),
      fileName: basename(file.foundAt),
      sha256: null,
    })),
    problems: [...problems, ...setProblems],
    folders,
  };
}
