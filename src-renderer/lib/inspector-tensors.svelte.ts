/** The inspector's tensor table: filters by layer, type and name, and pages. */
import type { GufoApi, TensorPage, TensorQuery } from '../../src-preload/api';
import { Loadable } from './inspector-loadable.svelte';

export const TENSOR_PAGE = 50;

export class TensorTableStore {
  /** '' for every layer, 'none' for tensors outside the blocks, else a layer number. */
  layer = $state('');
  /** '' for every type. */
  type = $state('');
  search = $state('');
  offset = $state(0);
  readonly page = new Loadable<TensorPage>();

  constructor(
    private readonly gufo: GufoApi,
    private readonly modelId: number,
  ) {}

  query(): TensorQuery {
    const query: TensorQuery = { offset: this.offset, limit: TENSOR_PAGE };
    if (this.layer !== '') query.layer = this.layer === 'none' ? 'none' : Number(this.layer);
    if (this.type !== '') query.type = this.type;
    if (this.search.trim() !== '') query.search = this.search;
    return query;
  }

  load(): Promise<void> {
    const query = this.query();
    return this.page.load(() => this.gufo.listTensors(this.modelId, query));
  }

  /** Changes the filters; the list starts again from its first page. */
  filter(change: { layer?: string; type?: string; search?: string }): void {
    Object.assign(this, change);
    this.offset = 0;
    void this.load();
  }

  goTo(offset: number): void {
    this.offset = offset;
    void this.load();
  }
}
