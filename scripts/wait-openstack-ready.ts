/**
 * Waits until a freshly started cloud can schedule a server, so the contract suite tests the API and
 * not the cloud's boot-up. A Nova that answers HTTP may still answer "No valid host was found" for a
 * while: nova-compute has not reported to Placement yet, its heartbeat is late on a loaded machine, or
 * the scheduler has not mapped the new host to its cell (it discovers hosts on a period). The only
 * proof is a boot, so this boots a probe server without networks, deletes it, and retries on a bound.
 *
 *   OS_CLOUD_ADMIN=os-real-admin node scripts/wait-openstack-ready.ts [--timeout-seconds 300] [--retry-seconds 15]
 *
 * Exits 0 when a probe server became ACTIVE, 1 with what it saw otherwise. Everything it creates
 * (probe server, and an image or flavor when the cloud has none) is removed before it exits.
 */
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { OpenStackClient } from '../src/openstack/client.ts';
import { processContext } from '../src/openstack/config/context.ts';
import { resolveCloudConfig } from '../src/openstack/config/resolve.ts';
import { createLogger } from '../src/lib/log.ts';

interface ComputeService {
  host: string;
  state: string;
  status: string;
}

const { values } = parseArgs({
  options: {
    'timeout-seconds': { type: 'string', default: '300' },
    'retry-seconds': { type: 'string', default: '15' },
  },
});
const deadline = Date.now() + Number(values['timeout-seconds']) * 1000;
const retryDelayMs = Number(values['retry-seconds']) * 1000;
const cloud = process.env.OS_CLOUD_ADMIN ?? process.env.OS_CLOUD;
if (!cloud) {
  console.error('wait-openstack-ready: set OS_CLOUD_ADMIN (or OS_CLOUD) to the cloud to probe');
  process.exit(2);
}
const say = (line: string) => console.log(`[openstack-ready] ${line}`);

const { config } = await resolveCloudConfig({ ...processContext(), cloud });
const os = await OpenStackClient.fromConfig(config, { log: createLogger({ level: 'warn' }) });
const undo: (() => Promise<unknown>)[] = [];
let ready = false;
let last = 'nothing probed yet';
try {
  const sources = await bootSources();
  for (let attempt = 1; Date.now() < deadline; attempt++) {
    last = await probe(sources, attempt);
    if (last === 'ACTIVE') {
      ready = true;
      break;
    }
    say(`attempt ${attempt}: ${last}; next try in ${retryDelayMs / 1000} s`);
    await sleep(Math.min(retryDelayMs, Math.max(0, deadline - Date.now())));
  }
} finally {
  for (const step of undo.reverse()) await step().catch((e: unknown) => say(`cleanup: ${String(e)}`));
  await os.close();
}
if (!ready) {
  console.error(`[openstack-ready] the cloud ${cloud} could not run a server in time: ${last}`);
  process.exit(1);
}
say(`the cloud ${cloud} runs servers`);

async function probe(sources: { flavorRef: string; imageRef: string }, attempt: number): Promise<string> {
  const res = await os.serviceClient('compute').request<{ services: ComputeService[] }>({
    method: 'GET',
    path: 'os-services',
    query: { binary: 'nova-compute' },
    label: 'service_list',
  });
  const usable = res.body.services.filter((s) => s.state === 'up' && s.status === 'enabled');
  if (usable.length === 0)
    return `no nova-compute is up and enabled (${JSON.stringify(res.body.services.map(({ host, state, status }) => ({ host, state, status })))})`;
  const { id } = await os.compute.servers.create({
    name: `openstack-ready-probe-${process.pid}-${attempt}`,
    ...sources,
    networks: 'none',
  });
  try {
    const server = await os.compute.servers.waitForStatus(id, 'ACTIVE', {
      timeoutMs: Math.max(10_000, Math.min(120_000, deadline - Date.now())),
    });
    return server.status;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  } finally {
    await os.compute.servers.delete(id);
    await os.compute.servers.waitForDeleted(id, { timeoutMs: 120_000 });
  }
}

/** The smallest image and a flavor it fits; made (and later removed) when the cloud has none. */
async function bootSources(): Promise<{ flavorRef: string; imageRef: string }> {
  const images = await os.image.images.list({ status: 'active' }).all();
  let image = [...images].sort((a, b) => a.min_disk - b.min_disk || a.min_ram - b.min_ram)[0];
  if (!image) {
    const created = await os.image.images.create({
      name: `openstack-ready-${process.pid}`,
      disk_format: 'raw',
      container_format: 'bare',
    });
    undo.push(() => os.image.images.delete(created.id));
    await os.image.images.upload(created.id, new Uint8Array(1024));
    image = await os.image.images.waitForActive(created.id, { timeoutMs: 60_000 });
  }
  const fits = (await os.compute.flavors.list().all())
    .filter((f) => f.disk >= image.min_disk && f.ram >= image.min_ram)
    .sort((a, b) => a.ram - b.ram);
  let flavorRef = fits[0]?.id;
  if (!flavorRef) {
    const flavor = await os.compute.flavors.create({
      name: `openstack-ready-${process.pid}`,
      vcpus: 1,
      ram: Math.max(128, image.min_ram),
      disk: Math.max(1, image.min_disk),
    });
    undo.push(() => os.compute.flavors.delete(flavor.id));
    flavorRef = flavor.id;
  }
  return { flavorRef, imageRef: image.id };
}
