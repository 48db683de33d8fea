/**
 * Lists that span pages, as an AsyncIterable of items (`for await (const net of pager)`), with
 * `.pages()` and `.all()`. Each service says "there is more" its own way:
 *
 * - `links`: Neutron, Octavia, Nova, Cinder: `"<collection>_links": [{"rel":"next","href":<absolute URL>}]`
 * - `next`: Glance: top-level `"next": "/v2/images?marker=…"` (relative)
 * - `keystone`: `"links": {"next": <URL or null>}` (Keystone mostly ignores `limit` and sends null)
 * - `single`: one page, nothing to follow
 *
 * A `next` in a shape the chosen strategy does not follow, a Keystone `truncated` list, a page that
 * repeats, or more than `maxPages` pages is a PaginationError: a list is never cut short in silence.
 * Every link is rebased onto the configured endpoint (see resolveLink) before it is followed.
 */
import { PaginationError } from './errors.ts';
import type { HttpMethod, ServiceClient } from './service-client.ts';
import type { Query } from './url.ts';

export type PageStrategy = 'links' | 'next' | 'keystone' | 'single';

export interface PagerOptions {
  client: ServiceClient;
  /** The list path, relative to the service's API root (`networks`, `lbaas/loadbalancers`). */
  path: string;
  query?: Query | undefined;
  /** The key of the item array in each page: `networks`, `loadbalancers`, `images`, `projects`. */
  collection: string;
  strategy: PageStrategy;
  /** Metrics label, e.g. `network_list`. */
  label: string;
  microversion?: string | undefined;
  /** Bounds every page fetch; `.pages()` and `.all()` may add their own. */
  signal?: AbortSignal | undefined;
  /** Guard against a server that never stops. Default 10,000. */
  maxPages?: number | undefined;
  /** Defaults to GET; Nova's and Cinder's `…/detail` lists are GETs too. */
  method?: HttpMethod | undefined;
  /** Turns each item as the service sent it into the typed item (see `CollectionNames.read`). */
  read?: ((item: unknown) => unknown) | undefined;
}

export interface Page<T> {
  items: T[];
  /** The URL fetched, secrets redacted. */
  url: string;
  requestId: string | undefined;
  /** The absolute URL of the next page, rebased onto the endpoint. */
  next: string | undefined;
}

export const DEFAULT_MAX_PAGES = 10_000;

export class Pager<T> implements AsyncIterable<T> {
  private readonly options: PagerOptions;
  private first: Promise<Page<T>> | undefined;

  constructor(options: PagerOptions) {
    this.options = options;
  }

  /** Pages in order. The first page is fetched once and reused by later iterations. */
  async *pages(options: { signal?: AbortSignal | undefined } = {}): AsyncGenerator<Page<T>, void, undefined> {
    const signal = joinSignals(this.options.signal, options.signal);
    const maxPages = this.options.maxPages ?? DEFAULT_MAX_PAGES;
    const seen = new Set<string>();
    let page = await this.firstPage(signal);
    for (let count = 1; ; count++) {
      yield page;
      const next = page.next;
      if (next === undefined) return;
      seen.add(page.url);
      if (seen.has(next))
        throw new PaginationError(page.url, `the next link ${next} repeats a page already read`);
      if (count >= maxPages)
        throw new PaginationError(page.url, `more than ${maxPages} pages; narrow the query`);
      page = await this.fetch(next, undefined, signal);
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** Every item, or the first `limit` items (then no further page is fetched). */
  async all(options: { limit?: number | undefined; signal?: AbortSignal | undefined } = {}): Promise<T[]> {
    const limit = options.limit ?? Infinity;
    const out: T[] = [];
    if (limit <= 0) return out;
    for await (const page of this.pages({ signal: options.signal })) {
      for (const item of page.items) {
        out.push(item);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  private firstPage(signal: AbortSignal | undefined): Promise<Page<T>> {
    if (!this.first) {
      const first = this.fetch(this.options.path, this.options.query, signal);
      // A failed first page (an abort, a 503) must not stick: the next iteration asks again.
      first.catch(() => {
        if (this.first === first) this.first = undefined;
      });
      this.first = first;
    }
    return this.first;
  }

  private async fetch(
    path: string,
    query: Query | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Page<T>> {
    const { client, collection, strategy } = this.options;
    const res = await client.request<unknown>({
      method: this.options.method ?? 'GET',
      path,
      query,
      label: this.options.label,
      microversion: this.options.microversion,
      signal,
    });
    const body = res.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new PaginationError(res.url, 'the answer is not a JSON object');
    }
    const record = body as Record<string, unknown>;
    const items = record[collection];
    if (!Array.isArray(items)) {
      throw new PaginationError(
        res.url,
        `the answer has no "${collection}" list (keys: ${Object.keys(record).join(', ')})`,
      );
    }
    const link = nextLink(record, collection, strategy, res.url);
    const next = link === undefined ? undefined : await client.url(await absolute(client, link, signal));
    const read = this.options.read;
    return { items: (read ? items.map(read) : items) as T[], url: res.url, requestId: res.requestId, next };
  }
}

/** The raw next link by `strategy`; throws when another shape says there is more. */
function nextLink(
  body: Record<string, unknown>,
  collection: string,
  strategy: PageStrategy,
  url: string,
): string | undefined {
  const found: Partial<Record<Exclude<PageStrategy, 'single'>, string>> = {};

  const linksKey = `${collection}_links`;
  if (body[linksKey] !== undefined && body[linksKey] !== null) {
    const links = body[linksKey];
    if (!Array.isArray(links)) throw new PaginationError(url, `"${linksKey}" is not a list`);
    for (const l of links as unknown[]) {
      const entry = l as { rel?: unknown; href?: unknown } | null;
      if (entry?.rel !== 'next') continue;
      if (typeof entry.href !== 'string' || entry.href === '')
        throw new PaginationError(url, `the next entry of "${linksKey}" has no href`);
      found.links = entry.href;
    }
  }
  if (body.next !== undefined && body.next !== null) {
    if (typeof body.next !== 'string') throw new PaginationError(url, '"next" is not a string');
    found.next = body.next;
  }
  const keystoneLinks = body.links;
  if (keystoneLinks !== null && typeof keystoneLinks === 'object' && !Array.isArray(keystoneLinks)) {
    const n = (keystoneLinks as { next?: unknown }).next;
    if (n !== undefined && n !== null) {
      if (typeof n !== 'string') throw new PaginationError(url, '"links.next" is not a string');
      found.keystone = n;
    }
  }
  if (body.truncated === true) {
    throw new PaginationError(
      url,
      'Keystone cut the list at its list_limit and offers no next page; filter the query',
    );
  }

  const mine = strategy === 'single' ? undefined : found[strategy];
  for (const [shape, href] of Object.entries(found)) {
    if (shape !== strategy) {
      throw new PaginationError(
        url,
        `the answer has a next page in the "${shape}" shape (${href}), which a "${strategy}" list does not follow`,
      );
    }
  }
  return mine;
}

/** Relative links (Glance) are rebased onto the endpoint; ServiceClient.url rebases absolute ones. */
async function absolute(
  client: ServiceClient,
  link: string,
  signal: AbortSignal | undefined,
): Promise<string> {
  if (/^https?:\/\//i.test(link)) return link;
  const endpoint = new URL(await client.endpoint(signal));
  return new URL(link, endpoint.origin).toString();
}

function joinSignals(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}
