/** Copying from chat messages: whole answers, and each code block through its own button. */

/** How long a copy button says "Copied". */
export const COPIED_FOR_MS = 1500;

export function copyText(text: string): Promise<void> {
  return navigator.clipboard.writeText(text);
}

/**
 * Svelte attachment: gives every code block rendered inside `node` a "Copy" button. Blocks come
 * from {@html}, so buttons are added to the DOM as blocks appear (also while an answer streams).
 */
export function codeCopyButtons(node: HTMLElement): () => void {
  const addButtons = () => {
    for (const head of node.querySelectorAll<HTMLElement>('.code-head:not(:has(button))')) {
      const code = head.parentElement?.querySelector('code');
      if (code) head.append(copyButton(() => code.textContent ?? ''));
    }
  };
  addButtons();
  const observer = new MutationObserver(addButtons);
  observer.observe(node, { childList: true, subtree: true });
  return () => observer.disconnect();
}

function copyButton(text: () => string): HTMLButtonElement {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'copy-code';
  label(button, 'Copy', 'Copy code');
  button.addEventListener('click', () => {
    copyText(text()).then(
      () => flash(button, 'Copied'),
      () => flash(button, 'Copy failed'),
    );
  });
  return button;
}

/** Says how the copy went, on the button itself (its accessible name too), for a moment. */
function flash(button: HTMLButtonElement, outcome: string): void {
  label(button, outcome, outcome);
  setTimeout(() => label(button, 'Copy', 'Copy code'), COPIED_FOR_MS);
}

function label(button: HTMLButtonElement, text: string, name: string): void {
  button.textContent = text;
  button.setAttribute('aria-label', name);
}
