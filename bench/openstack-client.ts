/**
 * OpenStack client overhead: the same small Neutron GET through the client (token cache, endpoint,
 * concurrency limit, retry loop, metrics, error mapping, JSON) and through a bare undici request (what
 * the transport sends with) on a keep-alive pool, sequential and 16 at a time; then the memory of a Session and of a client.
 * Prints figures; asserts nothing.
 *
 *   node --expose-gc bench/openstack-client.ts          CALLS=5000 SESSIONS=2000 for longer runs
 */
import { Agent, request } from 'undici';
import { createLogger } from '../src/lib/log.ts';
import { createRegistry } from '../src/lib/metrics.ts';
import { OpenStackClient } from '../src/openstack/client.ts';
import { ServiceClient } from '../src/openstack/core/service-client.ts';
import { Session } from '../src/openstack/core/session.ts';
import { TokenCache } from '../src/openstack/core/token-cache.ts';
import { Transport } from '../src/openstack/core/transport.ts';
import { openClientTargetOn } from '../src/openstack/core/testing/target.ts';
import { startTestCloud } from '../src/sim/openstack/testing/harness.ts';

const CALLS = Number(process.env.CALLS ?? 2_000);
const SESSIONS = Number(process.env.SESSIONS ?? 1_000);
const CONCURRENCY = 16;

const gc = (globalThis as { gc?: () => void }).gc;
function heapBytes(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** Mean microseconds per call over `n` calls spread on `concurrency` workers. */
async function perCall(n: number, concurrency: number, fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < n) await fn();
    }),
  );
  return ((performance.now() - start) * 1000) / n;
}

const sim = await startTestCloud({ profile: 'fast' });
const t = await openClientTargetOn(sim);
const registry = createRegistry({ defaultMetrics: false });
const client = await t.client(t.demo, { registry, log: createLogger({ level: 'info' }) });
const network = client.serviceClient('network');
const created = await network.request<{ network: { id: string } }>({
  method: 'POST',
  path: 'networks',
  body: { network: { name: 'bench' } },
  label: 'network_create',
});
const id = created.body.network.id;
const url = await network.url(`networks/${id}`);
const token = (await client.session.token()).value;

const pool = new Agent({ keepAliveTimeout: 30_000 });
const raw = async () => {
  const res = await request(url, {
    headers: { 'X-Auth-Token': token, Accept: 'application/json' },
    dispatcher: pool,
  });
  if (res.statusCode !== 200) throw new Error(`raw GET: ${res.statusCode}`);
  return res.body.json();
};
const viaClient = () => network.request({ method: 'GET', path: `networks/${id}`, label: 'network_get' });

// Warm up both paths (JIT, connections, the token).
await perCall(200, CONCURRENCY, raw);
await perCall(200, CONCURRENCY, viaClient);

console.log(`Neutron GET /v2.0/networks/{id} on the emulator, ${CALLS} calls each (µs per call)`);
console.log(
  `${''.padEnd(22)} ${'raw request'.padStart(11)} ${'client'.padStart(10)} ${'overhead'.padStart(10)}`,
);
for (const concurrency of [1, CONCURRENCY]) {
  // Alternate to spread any drift of the machine over both.
  const rawUs = (await perCall(CALLS / 2, concurrency, raw)) + (await perCall(CALLS / 2, concurrency, raw));
  const clientUs =
    (await perCall(CALLS / 2, concurrency, viaClient)) + (await perCall(CALLS / 2, concurrency, viaClient));
  const r = rawUs / 2;
  const c = clientUs / 2;
  const label = concurrency === 1 ? 'sequential' : `${concurrency} concurrent`;
  console.log(
    `${label.padEnd(22)} ${r.toFixed(1).padStart(11)} ${c.toFixed(1).padStart(10)} ${`${(c - r).toFixed(1)} (${((c / r - 1) * 100).toFixed(0)} %)`.padStart(10)}`,
  );
}

// Memory: Sessions of one identity share the token and the transport; a client has its own pool.
const tokens = new TokenCache();
const transport = new Transport({ registry });
const keep: unknown[] = [];
let before = heapBytes();
for (let i = 0; i < SESSIONS; i++) {
  const session = new Session(t.demo, { transport, tokenCache: tokens });
  keep.push(session, new ServiceClient(session, { type: 'network' }));
}
await (keep[0] as Session).token();
const perSession = (heapBytes() - before) / SESSIONS;
keep.length = 0;
before = heapBytes();
const clients: OpenStackClient[] = [];
for (let i = 0; i < SESSIONS; i++) {
  clients.push(
    await OpenStackClient.fromConfig(t.demo, { registry, tokenCache: tokens, log: createLogger() }),
  );
}
const perClient = (heapBytes() - before) / SESSIONS;
console.log(
  `memory: ${(perSession / 1024).toFixed(1)} KiB per Session with a ServiceClient; ` +
    `${(perClient / 1024).toFixed(1)} KiB per OpenStackClient (${SESSIONS} of each${gc ? '' : ', without --expose-gc: rough'})`,
);

await Promise.all(clients.map((c) => c.close()));
await pool.close();
await t.close();
