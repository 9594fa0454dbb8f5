/**
 * Where the user is, kept in the URL's hash (`#/inspector/3`, `#/chat/12`) so a reload, or the
 * back button, lands in the same place. The query string is left alone: it carries the token.
 */
import { SECTIONS, type SectionId } from './sections';

export interface Route {
  section: SectionId;
  /** The id after the section (a model for inspector/export/benchmarks, a chat for chat), if any. */
  id: number | null;
}

function parse(hash: string): Route {
  const [, section = '', id = ''] = hash.split('/');
  const known = SECTIONS.find((s) => s.id === section);
  const number = Number.parseInt(id, 10);
  return { section: known?.id ?? 'library', id: Number.isSafeInteger(number) ? number : null };
}

export function href(section: SectionId, id?: number | null): string {
  return id === undefined || id === null ? `#/${section}` : `#/${section}/${id}`;
}

class Router {
  route: Route = $state(parse(location.hash));

  constructor() {
    window.addEventListener('hashchange', () => (this.route = parse(location.hash)));
  }

  go(section: SectionId, id?: number | null): void {
    location.hash = href(section, id);
  }
}

export const router = new Router();
