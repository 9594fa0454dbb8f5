/**
 * The Hugging Face cache (huggingface_hub's layout): `models--<org>--<repo>/snapshots/<revision>/<path>`
 * are links into `blobs/`, where each file is kept once under its hash. Files are read in place,
 * named "org/repo/path"; a file in several revisions is one model (one blob). The revision
 * refs/main points at comes first.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { findGgufFiles, reasonOf, type ScanProblem } from '../library/find-gguf-files';
import type { Discovery, FoundModel } from './found-model';
import { groupSplitSets } from './split-sets';

const REPO_PREFIX = 'models--';

export async function discoverHuggingFace(hub: string): Promise<Discovery> {
  const problems: ScanProblem[] = [];
  const folders: string[] = [hub];
  const models: FoundModel[] = [];
  let repos: string[];
  try {
    repos = (await readdir(hub)).filter((name) => name.startsWith(REPO_PREFIX)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      problems.push({ path: hub, reason: `cannot read folder ${hub}: ${reasonOf(err)}` });
    return { models, problems, folders };
  }
  for (const name of repos) {
    const repoDir = join(hub, name);
    const snapshots = join(repoDir, 'snapshots');
    const revisions = await revisionsOf(repoDir);
    if (revisions.length === 0) continue;
    folders.push(repoDir, snapshots);
    const roots = revisions.map((r) => join(snapshots, r));
    const found = await findGgufFiles(roots);
    const { grouped, problems: setProblems } = groupSplitSets(found.files);
    problems.push(...found.problems, ...setProblems);
    folders.push(...found.folders);
    const repoId = name.slice(REPO_PREFIX.length).split('--').join('/');
    for (const { file, parts } of grouped) {
      const root = roots.find((r) => file.foundAt.startsWith(r + sep)) ?? roots[0]!;
      models.push({
        path: file.path,
        parts,
        source: 'huggingface',
        label: `${repoId}/${relative(root, file.foundAt).split(sep).join('/')}`,
        fileName: basename(file.foundAt),
        sha256: null,
      });
    }
  }
  return { models, problems, folders };
}

/** The repo's snapshot folders, the one refs/main names first. */
async function revisionsOf(repoDir: string): Promise<string[]> {
  let revisions: string[];
  try {
    revisions = (await readdir(join(repoDir, 'snapshots'))).filter((r) => !r.startsWith('.')).sort();
  } catch {
    return [];
  }
  const main = await readFile(join(repoDir, 'refs', 'main'), 'utf8').then(
    (text) => text.trim(),
    () => null,
  );
  return main && revisions.includes(main) ? [main, ...revisions.filter((r) => r !== main)] : revisions;
}
