import type { RequestParams } from './generated/api.js';

/** One page of a list operation: `GET …?page=&page_size=` (page_size at most 200). */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

/** The paging members of a list operation's query. */
export interface PageQuery {
  page?: number;
  page_size?: number;
}

/** A generated list operation, e.g. `client.datasets.listDatasets`: any operation answering a Page. */
export type ListOperation = (query: never, params?: RequestParams) => Promise<Page<unknown>>;
/** The query a list operation takes (its path parameters included). */
export type QueryOf<L extends ListOperation> = L extends (query: infer Q, ...rest: never[]) => unknown
  ? NonNullable<Q>
  : never;
/** The items a list operation answers. */
export type ItemOf<L extends ListOperation> = L extends (...args: never[]) => Promise<Page<infer T>> ? T : never;

/**
 * Every page of a list operation from `query.page` (default 1) on, each fetched when the
 * previous one has been consumed; ends after the page that reaches `total` (or an empty one).
 * The query is typed by the operation (its types come from the operation, not the literal).
 *
 *   for await (const page of pages(client.datasets.listDatasets, { workspace_id, page_size: 200 })) …
 */
export async function* pages<L extends ListOperation>(
  list: L,
  query: QueryOf<L>,
  params?: RequestParams,
): AsyncGenerator<Page<ItemOf<L>>, void, undefined> {
  const fetchPage = list as unknown as (query: PageQuery, params?: RequestParams) => Promise<Page<ItemOf<L>>>;
  let page = (query as PageQuery).page ?? 1;
  for (;;) {
    const answer = await fetchPage({ ...(query as PageQuery), page }, params);
    yield answer;
    if (answer.items.length === 0 || answer.page * answer.page_size >= answer.total) return;
    page = answer.page + 1;
  }
}

/**
 * Every item of a list operation, page after page (see pages).
 *
 *   for await (const dataset of paginate(client.datasets.listDatasets, { workspace_id })) …
 */
export async function* paginate<L extends ListOperation>(
  list: L,
  query: QueryOf<L>,
  params?: RequestParams,
): AsyncGenerator<ItemOf<L>, void, undefined> {
  for await (const page of pages(list, query, params)) yield* page.items;
}
