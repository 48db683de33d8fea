/**
 * OCCM's InstancesV2 (`pkg/openstack/instances.go`) over our client: which server a Node is
 * (getInstance: by providerID, else by exact name) and its metadata (providerID, instance type,
 * zone, region, addresses, additional labels). The node controllers decide what to do with it.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { OpenStackApi } from './secret/rotating-client.ts';
import type { Server } from '../openstack/compute/v2/servers.ts';
import { isNotFound } from '../openstack/core/errors.ts';
import type { CcmConfig } from './config/types.ts';
import { gatherAddressSources, nodeAddresses, type NodeAddress } from './node-addresses.ts';
import { additionalLabels, instanceTypeOfFlavor, instanceTypeSteps, zoneOf } from './node-metadata.ts';
import { providerId, serverIdForRegion } from '../openstack/services/provider-id.ts';

export type ServerLookup =
  | { kind: 'found'; server: Server }
  | { kind: 'notFound'; by: string }
  | { kind: 'ambiguous'; by: string; ids: string[] };

/** Python `re` metacharacters, so a Node name is matched literally by Nova's `name` regex. */
function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * getInstance: `GET /servers/{id}` for a providerID (404 → not found; a regional providerID of
 * another region throws ProviderIdError), else `GET /servers/detail?name=^<node>$`, where more
 * than one match is refused rather than guessed.
 */
export async function findServer(
  os: OpenStackApi,
  node: Pick<V1Node, 'metadata' | 'spec'>,
  region: string | undefined,
  signal: AbortSignal,
): Promise<ServerLookup> {
  const pid = node.spec?.providerID;
  if (pid) {
    const id = serverIdForRegion(pid, region);
    try {
      return { kind: 'found', server: await os.compute.servers.get(id, { signal }) };
    } catch (err) {
      if (isNotFound(err)) return { kind: 'notFound', by: `providerID ${pid}` };
      throw err;
    }
  }
  const name = node.metadata?.name ?? '';
  const servers = await os.compute.servers.list({ name: `^${escapeRegex(name)}$` }, { signal }).all();
  // Nova's regex is a search on the whole name; the anchors make it exact, the filter keeps it so.
  const exact = servers.filter((s) => s.name === name);
  if (exact.length === 0) return { kind: 'notFound', by: `name ${name}` };
  if (exact.length > 1) return { kind: 'ambiguous', by: `name ${name}`, ids: exact.map((s) => s.id) };
  return { kind: 'found', server: exact[0]! };
}

export interface InstanceMetadata {
  providerId: string;
  instanceType: string;
  zone: string;
  region: string;
  addresses: NodeAddress[];
  additionalLabels: Record<string, string>;
}

/** InstanceMetadata: the instance type may cost a flavor lookup, the addresses a port list. */
export async function instanceMetadata(
  os: OpenStackApi,
  config: CcmConfig,
  server: Server,
  signal: AbortSignal,
): Promise<InstanceMetadata> {
  const region = config.cloud.regionName ?? '';
  return {
    providerId: providerId(server.id, config.regionalProviderId ? region : undefined),
    instanceType: await instanceType(os, server, signal),
    zone: zoneOf(server),
    region,
    addresses: await addressesOf(os, config, server, signal),
    additionalLabels: additionalLabels(server),
  };
}

export async function addressesOf(
  os: OpenStackApi,
  config: CcmConfig,
  server: Server,
  signal: AbortSignal,
): Promise<NodeAddress[]> {
  const sources = await gatherAddressSources(os.network, server, { signal });
  return nodeAddresses(sources, config.networking);
}

async function instanceType(os: OpenStackApi, server: Server, signal: AbortSignal): Promise<string> {
  let lastError: Error | undefined;
  for (const step of instanceTypeSteps(server)) {
    if (step.kind === 'label') return step.value;
    try {
      return instanceTypeOfFlavor(await os.compute.flavors.get(step.flavorId, { signal }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      lastError = err;
    }
  }
  if (lastError) throw lastError;
  return '';
}
