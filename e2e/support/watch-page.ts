import type { BrowserContext, Page } from '@playwright/test';

/**
 * Records every request the pages of `context` make to a host other than `allowedHost`: Gufo is
 * offline, so the list must stay empty. Observed, not intercepted, so streams flow untouched.
 */
export function watchOffsiteRequests(context: BrowserContext, allowedHost: string): string[] {
  const offsite: string[] = [];
  context.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol === 'data:' || url.protocol === 'blob:') return;
    if (url.host !== allowedHost) offsite.push(request.url());
  });
  return offsite;
}

/** Console errors and warnings (CSP violations among them) and uncaught exceptions. */
export function collectProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return problems;
}
