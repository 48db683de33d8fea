/**
 * OpenStack emulator benchmark: requests/s for port create and filtered port list, and memory with
 * 10,000 ports, 1,000 servers and 1,000 load balancers. Prints figures; asserts nothing.
 *
 *   npm run bench:sim            (node --expose-gc bench/sim-openstack.ts)
 *   PORTS=2000 SERVERS=200 LBS=200 npm run bench:sim   for a quicker run
 */
import { eventually, startTestCloud } from '../src/sim/openstack/testing/harness.ts';

const PORTS = Number(process.env.PORTS ?? 10_000);
const SERVERS = Number(process.env.SERVERS ?? 1_000);
const LBS = Number(process.env.LBS ?? 1_000);
const CONCURRENCY = 16;

const gc = (globalThis as { gc?: () => void }).gc;
function heapMiB(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

async function timed(
  label: string,
  n: number,
  fn: (i: number) => Promise<{ status: number }>,
  concurrency = CONCURRENCY,
) {
  const start = performance.now();
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) if ((await fn(next++)).status >= 400) failed++;
    }),
  );
  const s = (performance.now() - start) / 1000;
  console.log(`${label.padEnd(56)} ${String(n).padStart(6)} calls  ${(n / s).toFixed(0).padStart(6)} req/s`);
  // A benchmark of error answers measures nothing: stop rather than print a misleading figure.
  if (failed > 0) throw new Error(`${label}: ${failed} of ${n} calls failed`);
}

const t = await startTestCloud({ profile: 'fast' });
const token = await t.token('demo');
const heap0 = heapMiB();

const net = await t.request('neutron', 'POST', '/v2.0/networks', {
  token,
  body: { network: { name: 'bench' } },
});
const networkId: string = net.body.network.id;
await t.request('neutron', 'POST', '/v2.0/subnets', {
  token,
  body: { subnet: { network_id: networkId, cidr: '10.128.0.0/16', ip_version: 4, name: 'bench' } },
});

// Port create, one at a time over CONCURRENCY connections.
const single = Math.min(2_000, PORTS);
await timed('neutron POST /v2.0/ports (single)', single, (i) =>
  t.request('neutron', 'POST', '/v2.0/ports', {
    token,
    body: { port: { network_id: networkId, name: `p-${i}`, device_id: `dev-${i % 500}` } },
  }),
);
// The rest in bulk creates of 100.
const bulks = Math.ceil((PORTS - single) / 100);
await timed(
  'neutron POST /v2.0/ports (bulk of 100)',
  bulks,
  (b) =>
    t.request('neutron', 'POST', '/v2.0/ports', {
      token,
      body: {
        ports: Array.from({ length: 100 }, (_, i) => ({
          network_id: networkId,
          name: `b-${b}-${i}`,
          device_id: `dev-${i}`,
        })),
      },
    }),
  4,
);
const heapPorts = heapMiB();

await timed('neutron GET /v2.0/ports?device_id=… (indexed)', 2_000, (i) =>
  t.request('neutron', 'GET', `/v2.0/ports?device_id=dev-${i % 500}&network_id=${networkId}`, { token }),
);
await timed('neutron GET /v2.0/ports?name=… (attribute filter)', 500, (i) =>
  t.request('neutron', 'GET', `/v2.0/ports?name=p-${i}`, { token }),
);
await timed('neutron GET /v2.0/ports?limit=100 (first page)', 500, () =>
  t.request('neutron', 'GET', '/v2.0/ports?limit=100', { token }),
);

const images = (await t.request('glance', 'GET', '/v2/images', { token })).body.images as {
  id: string;
  min_disk: number;
}[];
const image = [...images].sort((a, b) => a.min_disk - b.min_disk)[0]!;
const flavors = (await t.request('nova', 'GET', '/v2.1/flavors/detail', { token })).body.flavors as {
  id: string;
  disk: number;
  ram: number;
}[];
const flavor = flavors.filter((f) => f.disk >= image.min_disk).sort((a, b) => a.ram - b.ram)[0]!;
await timed('nova POST /v2.1/servers', SERVERS, (i) =>
  t.request('nova', 'POST', '/v2.1/servers', {
    token,
    headers: { 'OpenStack-API-Version': 'compute 2.72' },
    body: {
      server: {
        name: `vm-${i}`,
        flavorRef: flavor.id,
        imageRef: image.id,
        networks: [{ uuid: networkId }],
      },
    },
  }),
);
await timed('nova GET /v2.1/servers/detail?name=vm-1', 200, () =>
  t.request('nova', 'GET', '/v2.1/servers/detail?name=vm-1', { token }),
);
// Servers build asynchronously (their Neutron ports are made during the build): measure them built.
await eventually(
  async () =>
    (await t.request('nova', 'GET', '/v2.1/servers/detail?status=BUILD&limit=1', { token })).body.servers
      .length === 0,
  { timeoutMs: 60_000, what: 'servers ACTIVE' },
);
const heapServers = heapMiB();

const subnetId: string = (
  await t.request('neutron', 'GET', `/v2.0/subnets?network_id=${networkId}`, { token })
).body.subnets[0].id;
await timed('octavia POST /v2/lbaas/loadbalancers (fully populated)', LBS, (i) =>
  t.request('octavia', 'POST', '/v2/lbaas/loadbalancers', {
    token,
    body: {
      loadbalancer: {
        name: `lb-${i}`,
        vip_subnet_id: subnetId,
        listeners: [
          {
            protocol: 'TCP',
            protocol_port: 80,
            default_pool: {
              name: `pool-${i}`,
              protocol: 'TCP',
              lb_algorithm: 'ROUND_ROBIN',
              members: [1, 2, 3].map((m) => ({ address: `10.128.200.${m}`, protocol_port: 30080 })),
            },
          },
        ],
      },
    },
  }),
);
await timed('octavia GET /v2/lbaas/loadbalancers?name=lb-1', 200, () =>
  t.request('octavia', 'GET', '/v2/lbaas/loadbalancers?name=lb-1', { token }),
);
const heapLbs = heapMiB();

const stats = await fetch(`${t.url}/_sim/stats`).then((r) => r.json() as Promise<{ total: number }>);
console.log('');
console.log(
  `memory (heap used after GC; baseline ${heap0.toFixed(1)} MiB, process RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB):`,
);
console.log(
  `  ${PORTS} ports:               +${(heapPorts - heap0).toFixed(1)} MiB  (${(((heapPorts - heap0) * 1024) / PORTS).toFixed(2)} KiB/port)`,
);
console.log(
  `  ${SERVERS} servers (+1 port each):  +${(heapServers - heapPorts).toFixed(1)} MiB  (${(((heapServers - heapPorts) * 1024) / SERVERS).toFixed(2)} KiB/server)`,
);
console.log(
  `  ${LBS} load balancers:      +${(heapLbs - heapServers).toFixed(1)} MiB  (${(((heapLbs - heapServers) * 1024) / LBS).toFixed(2)} KiB/LB incl. VIP port, listener, pool, 3 members)`,
);
console.log(`requests served: ${stats.total}${gc ? '' : ' (run with --expose-gc for exact heap figures)'}`);
await t.close();
