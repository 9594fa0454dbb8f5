/**
 * Chat messages as HTML that is safe to put in the page: markdown rendered by `marked`, then
 * sanitized by DOMPurify with an allow-list of the tags markdown makes. Whatever a model writes,
 * nothing runs and nothing is fetched: raw HTML is shown as text, images become links, and links
 * open outside the app.
 */
import createDOMPurify, { type Config, type DOMPurify } from 'dompurify';
import { Marked, type Tokens } from 'marked';

const marked = new Marked({
  gfm: true,
  // Chat text uses single line breaks as line breaks.
  breaks: true,
  async: false,
  renderer: {
    html: ({ text, block }: Tokens.HTML | Tokens.Tag) =>
      block ? `<p class="raw-html">${escapeHtml(text.trim())}</p>\n` : escapeHtml(text),
    image: ({ href, text }: Tokens.Image) => `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`,
    checkbox: ({ checked }: Tokens.Checkbox) => (checked ? '☑ ' : '☐ '),
    code: ({ text, lang }: Tokens.Code) => {
      const language = /^\S*/.exec(lang ?? '')?.[0] ?? '';
      const label = escapeHtml(language || 'text');
      const codeClass = language ? ` class="language-${escapeHtml(language)}"` : '';
      return `<div class="code-block"><div class="code-head"><span class="code-lang">${label}</span></div><pre><code${codeClass}>${escapeHtml(text)}</code></pre></div>\n`;
    },
  },
});

const SANITIZE: Config = {
  ALLOWED_TAGS: [
    'a',
    'blockquote',
    'br',
    'code',
    'del',
    'div',
    'em',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'hr',
    'li',
    'ol',
    'p',
    'pre',
    'span',
    'strong',
    'table',
    'tbody',
    'td',
    'th',
    'thead',
    'tr',
    'ul',
  ],
  ALLOWED_ATTR: ['href', 'title', 'class', 'start', 'align'],
  // Web and mail links only: no javascript:, data: or links into the app itself.
  ALLOWED_URI_REGEXP: /^(?:https?|mailto):/i,
};

let purifier: DOMPurify | undefined;

/** A DOMPurify of our own, so its hook touches no one else's sanitizing. Made on first use: it needs a window. */
function purify(): DOMPurify {
  if (!purifier) {
    purifier = createDOMPurify(window);
    purifier.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName !== 'A' || !node.hasAttribute('href')) return;
      // The app opens new windows in the system browser, without telling it where the click came from.
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    });
  }
  return purifier;
}

/**
 * The message as sanitized HTML, one string per top-level block: while an answer streams only
 * its last block changes, so the blocks before it keep their DOM (and the reader's selection).
 */
export function renderMarkdown(markdown: string): string[] {
  return marked
    .lexer(markdown)
    .filter((token) => token.type !== 'space')
    .map((token) => purify().sanitize(marked.parser([token]), SANITIZE));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
