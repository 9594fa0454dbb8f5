/**
 * The sanitizer needs a real DOM: the markdown module is bundled as the app bundles it and run in
 * Chromium (the browser the app runs in), and the tests look at the elements it makes.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Rollup } from 'vite';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let browser: Browser;
let page: Page;

beforeAll(async () => {
  const bundle = (await build({
    configFile: false,
    logLevel: 'silent',
    build: {
      write: false,
      minify: false,
      lib: { entry: 'src-renderer/lib/markdown.ts', formats: ['iife'], name: 'GufoMarkdown' },
    },
  })) as Rollup.RollupOutput[];
  browser = await chromium.launch({
    executablePath: process.env.GUFO_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  page = await browser.newPage();
  await page.setContent('<!doctype html><div id="out"></div>');
  await page.addScriptTag({ content: bundle[0]!.output[0].code });
});

afterAll(async () => {
  await browser?.close();
});

interface Rendered {
  blocks: number;
  html: string;
  /** Every element the HTML makes, by tag name. */
  tags: string[];
  /** Every attribute name on them. */
  attributes: string[];
  links: { href: string | null; target: string | null; rel: string | null; text: string }[];
  text: string;
}

/** Renders `markdown` into the page, as MessageContent does, and describes the result. */
function render(markdown: string): Promise<Rendered> {
  return page.evaluate((source) => {
    const blocks = (
      window as unknown as { GufoMarkdown: { renderMarkdown(md: string): string[] } }
    ).GufoMarkdown.renderMarkdown(source);
    const out = document.getElementById('out')!;
    out.innerHTML = blocks.join('');
    return {
      blocks: blocks.length,
      html: out.innerHTML,
      tags: [...out.querySelectorAll('*')].map((e) => e.tagName.toLowerCase()),
      attributes: [...out.querySelectorAll('*')].flatMap((e) => e.getAttributeNames()),
      links: [...out.querySelectorAll('a')].map((a) => ({
        href: a.getAttribute('href'),
        target: a.getAttribute('target'),
        rel: a.getAttribute('rel'),
        text: a.textContent ?? '',
      })),
      text: out.textContent ?? '',
    };
  }, markdown);
}

describe('renderMarkdown', () => {
  it('renders markdown, one HTML string per top-level block', async () => {
    const r = await render(
      '# Title\n\nSome **bold** and *em* and `code`.\n\n- one\n- two\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |',
    );
    expect(r.blocks).toBe(5);
    for (const tag of ['h1', 'strong', 'em', 'code', 'ul', 'li', 'blockquote', 'table', 'th', 'td'])
      expect(r.tags).toContain(tag);
  });

  it('keeps single line breaks, as chat text means them', async () => {
    expect((await render('line one\nline two')).tags).toContain('br');
  });

  it('puts code blocks in <pre><code> under a header naming the language, escaped', async () => {
    const r = await render('```js\nif (a < b) alert("<b>hi</b>");\n```');
    expect(r.html).toContain(
      '<div class="code-block"><div class="code-head"><span class="code-lang">js</span></div><pre><code class="language-js">',
    );
    expect(r.text).toContain('if (a < b) alert("<b>hi</b>");');
    expect(r.tags).not.toContain('b');
  });

  it('shows raw HTML as text and never makes its elements', async () => {
    const r = await render(
      '<script>alert(1)</script>\n\n<iframe src="https://example.com"></iframe>\n\nHi <img src=x onerror=alert(1)> <form action="https://x"><input></form> <style>body{}</style>',
    );
    for (const tag of ['script', 'iframe', 'img', 'form', 'input', 'style']) expect(r.tags).not.toContain(tag);
    expect(r.text).toContain('<img src=x onerror=alert(1)>');
    expect(r.text).toContain('<script>alert(1)</script>');
    expect(r.attributes.filter((name) => name.startsWith('on') || name === 'src' || name === 'action')).toEqual([]);
  });

  it('keeps a language name from breaking out of its attribute', async () => {
    const r = await render('```js"onclick="alert(1)\nx\n```');
    expect(r.attributes).not.toContain('onclick');
    expect(r.tags).toContain('pre');
  });

  it('makes markdown images into links, so nothing is fetched', async () => {
    const r = await render('![a cat](https://example.com/cat.png)');
    expect(r.tags).not.toContain('img');
    expect(r.links).toEqual([
      { href: 'https://example.com/cat.png', target: '_blank', rel: 'noopener noreferrer', text: 'a cat' },
    ]);
  });

  it('opens web links outside, and drops links that are not web or mail links', async () => {
    const r = await render(
      '[web](https://example.com/a?b=1) [mail](mailto:a@b.c) [js](javascript:alert(1)) [data](data:text/html,x) [app](#/settings) <https://auto.example>',
    );
    expect(r.links).toEqual([
      { href: 'https://example.com/a?b=1', target: '_blank', rel: 'noopener noreferrer', text: 'web' },
      { href: 'mailto:a@b.c', target: '_blank', rel: 'noopener noreferrer', text: 'mail' },
      { href: null, target: null, rel: null, text: 'js' },
      { href: null, target: null, rel: null, text: 'data' },
      { href: null, target: null, rel: null, text: 'app' },
      { href: 'https://auto.example', target: '_blank', rel: 'noopener noreferrer', text: 'https://auto.example' },
    ]);
  });

  it('writes task lists as text, without form controls', async () => {
    const r = await render('- [x] done\n- [ ] todo');
    expect(r.tags).not.toContain('input');
    expect(r.text).toContain('☑ done');
    expect(r.text).toContain('☐ todo');
  });
});
