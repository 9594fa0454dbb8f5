/** The inspector's metadata panel: search, pages, and long arrays opened a page at a time. */
import type { GufoApi, MetadataEntry, MetadataPage } from '../../src-preload/api';
import { messageOf } from './format';
import { Loadable } from './inspector-loadable.svelte';

export const METADATA_PAGE = 50;
/** Array items each "Show more" adds. */
export const ARRAY_STEP = 100;

export interface OpenArray {
  items: unknown[];
  total: number;
  loading: boolean;
  error: string | null;
}

export class MetadataStore {
  search = $state('');
  offset = $state(0);
  readonly page = new Loadable<MetadataPage>();
  /** Arrays the user opened further than their first items, by key. */
  arrays: Record<string, OpenArray> = $state({});

  constructor(
    private readonly gufo: GufoApi,
    private readonly modelId: number,
  ) {}

  load(): Promise<void> {
    const query = { search: this.search, offset: this.offset, limit: METADATA_PAGE };
    return this.page.load(() => this.gufo.modelMetadata(this.modelId, query));
  }

  setSearch(search: string): void {
    this.search = search;
    this.offset = 0;
    void this.load();
  }

  goTo(offset: number): void {
    this.offset = offset;
    void this.load();
  }

  /** The items to show for an array entry: its first items, or all the user has loaded. */
  itemsOf(entry: MetadataEntry): unknown[] {
    return this.arrays[entry.key]?.items ?? (entry.value as unknown[]);
  }

  async showMore(entry: MetadataEntry): Promise<void> {
    const from = this.itemsOf(entry);
    this.arrays[entry.key] = { items: from, total: entry.arrayLength ?? from.length, loading: true, error: null };
    // The state proxy, not the object assigned: changes to it are seen.
    const open = this.arrays[entry.key]!;
    try {
      const page = await this.gufo.metadataArray(this.modelId, entry.key, from.length, ARRAY_STEP);
      Object.assign(open, { items: [...from, ...page.items], total: page.total, loading: false });
    } catch (err) {
      Object.assign(open, { loading: false, error: messageOf(err) });
    }
  }

  /** Back to the first items. */
  collapse(entry: MetadataEntry): void {
    delete this.arrays[entry.key];
  }
}
