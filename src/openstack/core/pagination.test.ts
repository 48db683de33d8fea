/**
 * Pager against the emulator or the real cloud of OS_CLOUD: Neutron's `networks_links`, Glance's
 * relative `next`, Keystone's `links`, and the errors that keep a list from being cut short in silence.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../lib/metrics.ts';
import type { OpenStackClient } from '../client.ts';
import { PaginationError } from './errors.ts';
import { Pager, type PageStrategy } from './pagination.ts';
import { ServiceClient } from './service-client.ts';
import { requestCount } from './testing/metrics.ts';
import { openClientTarget, unique, type ClientTarget } from './testing/target.ts';

describe('pagination', () => {
  let t: ClientTarget;
  let demo: OpenStackClient;
  const registry = createRegistry({ defaultMetrics: false });
  const names = Array.from({ length: 5 }, () => unique('client-page'));
  const ids: string[] = [];
  const images: string[] = [];
  const tag = unique('client-page-tag');
  before(async () => {
    t = await openClientTarget();
    demo = await t.client(t.demo, { registry });
    for (const name of names) {
      const res = await demo.serviceClient('network').request<{ network: { id: string } }>({
        method: 'POST',
        path: 'networks',
        body: { network: { name } },
        label: 'network_create',
      });
      ids.push(res.body.network.id);
    }
    for (let i = 0; i < 3; i++) {
      const res = await demo.serviceClient('image').request<{ id: string }>({
        method: 'POST',
        path: 'images',
        body: { name: `${tag}-${i}`, disk_format: 'raw', container_format: 'bare', tags: [tag] },
        label: 'image_create',
      });
      images.push(res.body.id);
    }
  });
  after(async () => {
    const network = demo?.serviceClient('network');
    for (const id of ids)
      await network.request({ method: 'DELETE', path: `networks/${id}`, label: 'network_delete' });
    for (const id of images)
      await demo
        .serviceClient('image')
        .request({ method: 'DELETE', path: `images/${id}`, label: 'image_delete' });
    await t?.close();
  });

  const networks = (strategy: PageStrategy = 'links', maxPages?: number) =>
    new Pager<{ id: string; name: string }>({
      client: demo.serviceClient('network'),
      path: 'networks',
      query: { name: names, limit: 2 },
      collection: 'networks',
      strategy,
      label: 'network_list',
      maxPages,
    });

  it('follows Neutron next links across pages, as items and as pages', async () => {
    const before = await requestCount(registry, 'network_list');
    const pager = networks();
    const pages = [];
    for await (const page of pager.pages()) pages.push(page.items.map((n) => n.name));
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 2, 1],
    );
    assert.deepEqual(pages.flat().sort(), [...names].sort());
    const items = [];
    for await (const net of pager) items.push(net.id);
    assert.deepEqual(items.sort(), [...ids].sort());
    // The first page was fetched once for both iterations.
    assert.equal((await requestCount(registry, 'network_list')) - before, 5);
  });

  it('stops fetching once `all` has its limit', async () => {
    const before = await requestCount(registry, 'network_list');
    assert.equal((await networks().all({ limit: 3 })).length, 3);
    assert.equal((await requestCount(registry, 'network_list')) - before, 2);
    assert.equal((await networks().all()).length, 5);
  });

  it("follows Glance's relative next", async () => {
    const pager = new Pager<{ id: string }>({
      client: demo.serviceClient('image'),
      path: 'images',
      query: { tag, limit: 1 },
      collection: 'images',
      strategy: 'next',
      label: 'image_list',
    });
    let pages = 0;
    const found: string[] = [];
    for await (const page of pager.pages()) {
      pages++;
      found.push(...page.items.map((i) => i.id));
    }
    assert.deepEqual(found.sort(), [...images].sort());
    assert.ok(pages >= 3);
  });

  it("reads Keystone's single page with links.next null", async () => {
    const mine = await demo.identity.projects.listMine().all();
    assert.ok(mine.some((p) => p.name === t.demo.projectName));
  });

  it('throws on a next page in a shape the strategy does not follow, never truncating', async () => {
    await assert.rejects(networks('single').all(), (e: unknown) => {
      assert.ok(PaginationError.is(e));
      assert.match(
        e.message,
        /has a next page in the "links" shape .* which a "single" list does not follow/,
      );
      return true;
    });
    await assert.rejects(networks('next').all(), PaginationError.is);
    await assert.rejects(
      new Pager({
        client: demo.serviceClient('network'),
        path: 'networks',
        collection: 'ports',
        strategy: 'links',
        label: 'x',
      }).all(),
      /has no "ports" list/,
    );
  });

  it('stops at the page limit with an error', async () => {
    await assert.rejects(networks('links', 2).all(), /more than 2 pages; narrow the query/);
  });

  describe('against a server whose next link loops', () => {
    let server: Server;
    let endpoint: string;
    before(async () => {
      server = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            things: [{ id: 1 }],
            things_links: [{ rel: 'next', href: `${endpoint}/v1/things?marker=1` }],
          }),
        );
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((r) => server.close(() => r())));

    it('notices the repeat instead of fetching forever', async () => {
      const client = new ServiceClient(demo.session, { type: 'things', endpoint });
      const pager = new Pager({
        client,
        path: 'v1/things',
        collection: 'things',
        strategy: 'links',
        label: 'thing_list',
      });
      await assert.rejects(pager.all(), /repeats a page already read/);
    });
  });
});
