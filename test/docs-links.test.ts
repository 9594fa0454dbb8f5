/**
 * Issue #15: the README is a user's first page (at most 8 KB) and the rest lives in docs/; every
 * relative link in either must lead to a file that exists, so moving a page cannot strand a link.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const README = join(REPO, 'README.md');
const README_MAX_BYTES = 8192;

/** README.md and every Markdown file in docs/. */
function markdownFiles(): string[] {
  const docs = join(REPO, 'docs');
  return [
    README,
    ...readdirSync(docs)
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => join(docs, f)),
  ];
}

/** Targets of inline links `[text](target)` and images that point into the repository (no scheme, not just an anchor). */
function relativeLinks(markdown: string): string[] {
  // Code spans and fenced blocks are not links.
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const targets = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'));
}

describe('README and docs', () => {
  it(`keeps README.md within ${README_MAX_BYTES} bytes`, () => {
    expect(statSync(README).size).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it('finds relative links in the README (the check below is not vacuous)', () => {
    expect(relativeLinks(readFileSync(README, 'utf8')).length).toBeGreaterThan(0);
  });

  for (const file of markdownFiles()) {
    it(`${relative(REPO, file)}: every relative link resolves to a file`, () => {
      const broken = relativeLinks(readFileSync(file, 'utf8')).filter((target) => {
        const path = decodeURI(target.split('#')[0]!);
        return !existsSync(resolve(dirname(file), path));
      });
      expect(broken, `broken links in ${relative(REPO, file)}`).toEqual([]);
    });
  }
});
