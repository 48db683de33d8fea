/**
 * The bastion (CAPO's reconcileBastion, bastionToOpenStackServerSpec, deleteBastion): an
 * OpenStackServer owned by the OpenStackCluster, built from `bastion.spec` the way CAPO builds a
 * machine's server (one port on the cluster network with the bastion security group when no ports
 * are given; machine tags ∪ cluster tags; the machine's identityRef, else the cluster's), in
 * `bastion.availabilityZone`. Once the server is ready, a floating IP on its first port
 * (`bastion.floatingIP`, else the one in status, else a new one) → `status.bastion`.
 *
 * A changed bastion spec replaces the bastion without a moment without one (CAPO #2167): the new
 * server is created next to the old, the floating IP moves to it in one Neutron update once it is
 * ready, and only then is the old server deleted. The first bastion is `<cluster>-bastion`, CAPO's
 * name, so a bastion CAPO made is adopted; a replacement whose name is taken gets
 * `<cluster>-bastion-<spec hash>`. Each server carries the hash of the spec it was made from
 * (annotation BASTION_SPEC_ANNOTATION), which is how the current one is told from old ones — and
 * found again after a restart, so a crash between two steps never makes a second one.
 *
 * `enabled: false` deletes the bastion: its floating IP first (detached only when the user named
 * it), then the OpenStackServer, whose controller deletes the server and its ports; the cluster
 * waits until the object is gone. A floating IP on the bastion's ports that this cluster did not
 * make is never deleted: the bastion stays until someone detaches it (see foreign.ts).
 */
import { createHash } from 'node:crypto';
import type { KubeClient } from '../../kube/index.ts';
import { isNotFound as isKubeNotFound } from '../../kube/index.ts';
import { isNotFound } from '../../openstack/core/errors.ts';
import type { FloatingIp } from '../../openstack/network/v2/floating-ips.ts';
import {
  capoKinds,
  CLUSTER_NAME_LABEL,
  type OpenStackCluster,
  type OpenStackClusterStatus,
  type OpenStackServer,
  type OpenStackServerSpec,
  type PortOpts,
} from '../api/index.ts';
import type { ClusterApi } from './api.ts';
import { foreignFloatingIp, isOurFloatingIp, type ForeignFloatingIp } from './foreign.ts';
import { bastionServerName, resourceDescription } from './names.ts';

export const BASTION_SPEC_ANNOTATION = 'capo.shiftstack.io/bastion-spec-hash';

export type BastionStatus = NonNullable<OpenStackClusterStatus['bastion']>;

export function bastionEnabled(cluster: Pick<OpenStackCluster, 'spec'>): boolean {
  const b = cluster.spec?.bastion;
  return b !== undefined && b.enabled !== false && b.spec !== undefined;
}

export interface BastionInput {
  cluster: OpenStackCluster;
  /** The accepted spec (see reviewSpec). */
  spec: NonNullable<OpenStackCluster['spec']>;
  status: OpenStackClusterStatus;
}

function union(a: readonly string[] | undefined, b: readonly string[] | undefined): string[] | undefined {
  const all = [...new Set([...(a ?? []), ...(b ?? [])])];
  return all.length > 0 ? all : undefined;
}

function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** The OpenStackServer spec of the bastion (CAPO's bastionToOpenStackServerSpec). */
export function bastionServerSpec(input: BastionInput): OpenStackServerSpec {
  const { spec, status } = input;
  const bastion = spec.bastion!;
  const m = bastion.spec!;
  const sg = status.bastionSecurityGroup?.id;
  const network = status.network;
  const ports: PortOpts[] = (m.ports?.length ? m.ports : [{}]).map((p) => {
    const port: PortOpts = structuredClone(p);
    if (!port.network && network) {
      port.network = { id: network.id };
      if (!port.fixedIPs?.length && network.subnets?.length)
        port.fixedIPs = network.subnets.map((s) => ({ subnet: { id: s.id } }));
    }
    const noPortSecurity = port.disablePortSecurity ?? spec.disablePortSecurity ?? false;
    if (!port.securityGroups?.length && sg && !noPortSecurity) port.securityGroups = [{ id: sg }];
    return port;
  });
  return defined({
    additionalBlockDevices: m.additionalBlockDevices,
    availabilityZone: bastion.availabilityZone,
    configDrive: m.configDrive,
    flavor: m.flavor,
    flavorID: m.flavorID,
    floatingIPPoolRef: m.floatingIPPoolRef,
    identityRef: m.identityRef ?? spec.identityRef,
    image: m.image,
    ports,
    rootVolume: m.rootVolume,
    schedulerHintAdditionalProperties: m.schedulerHintAdditionalProperties,
    securityGroups: m.securityGroups,
    serverGroup: m.serverGroup,
    serverMetadata: m.serverMetadata,
    sshKeyName: m.sshKeyName,
    tags: union(m.tags, spec.tags),
    trunk: m.trunk,
  });
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined && x !== null)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, canonical(x)]),
    );
  return v;
}

export function bastionSpecHash(spec: OpenStackServerSpec): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(spec)))
    .digest('hex')
    .slice(0, 10);
}

/** Every field `want` sets is the same in `have` (the API server adds defaults, never removes fields). */
function covers(have: unknown, want: unknown): boolean {
  if (want === undefined || want === null) return true;
  if (Array.isArray(want))
    return Array.isArray(have) && have.length === want.length && want.every((w, i) => covers(have[i], w));
  if (typeof want === 'object') {
    if (!have || typeof have !== 'object' || Array.isArray(have)) return false;
    return Object.entries(want).every(([k, w]) => covers((have as Record<string, unknown>)[k], w));
  }
  return have === want;
}

/** The server made from `spec`: by its hash annotation, or (a bastion CAPO made) by its spec. */
export function matches(server: OpenStackServer, spec: OpenStackServerSpec, hash: string): boolean {
  const recorded = server.metadata?.annotations?.[BASTION_SPEC_ANNOTATION];
  if (recorded !== undefined) return recorded === hash;
  return covers(server.spec, spec);
}

export interface BastionServers {
  current: OpenStackServer | undefined;
  old: OpenStackServer[];
}

export function pickBastion(
  servers: readonly OpenStackServer[],
  spec: OpenStackServerSpec,
  hash: string,
): BastionServers {
  const live = servers.filter((s) => !s.metadata?.deletionTimestamp);
  const current = live.find((s) => matches(s, spec, hash));
  return { current, old: servers.filter((s) => s !== current) };
}

/** `<cluster>-bastion`, or `<cluster>-bastion-<hash>` while that name is still taken. */
export function nextBastionName(
  clusterName: string,
  servers: readonly OpenStackServer[],
  hash: string,
): string {
  const base = bastionServerName(clusterName);
  return servers.some((s) => s.metadata?.name === base) ? `${base}-${hash}` : base;
}

export function newBastionServer(
  cluster: OpenStackCluster,
  name: string,
  spec: OpenStackServerSpec,
  hash: string,
): OpenStackServer {
  const clusterLabel = cluster.metadata?.labels?.[CLUSTER_NAME_LABEL];
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
    kind: 'OpenStackServer',
    metadata: {
      name,
      namespace: cluster.metadata?.namespace ?? 'default',
      ...(clusterLabel !== undefined ? { labels: { [CLUSTER_NAME_LABEL]: clusterLabel } } : {}),
      annotations: { [BASTION_SPEC_ANNOTATION]: hash },
      ownerReferences: [
        {
          apiVersion: cluster.apiVersion ?? 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'OpenStackCluster',
          name: cluster.metadata?.name ?? '',
          uid: cluster.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec,
  };
}

function firstPortID(server: OpenStackServer): string | undefined {
  return server.status?.resources?.ports?.[0]?.id;
}

function portIDs(server: OpenStackServer): string[] {
  return (server.status?.resources?.ports ?? []).map((p) => p.id);
}

export function bastionStatus(server: OpenStackServer, floatingIP: string | undefined): BastionStatus {
  const ip = server.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
  return defined({
    id: server.status?.instanceID,
    name: server.metadata?.name,
    sshKeyName: server.spec?.sshKeyName,
    state: server.status?.instanceState,
    ip,
    floatingIP,
  });
}

export interface FloatingIpContext {
  api: ClusterApi;
  spec: NonNullable<OpenStackCluster['spec']>;
  status: OpenStackClusterStatus;
  resourceName: string;
  signal: AbortSignal;
}

/**
 * The bastion's floating IP on `server`'s first port: the one already there; else the address the
 * user named or status recorded (moved here from an old bastion in one update, or created with that
 * address); else a new one, created already attached so no moment exists where it could leak.
 * Undefined when the cluster has no external network.
 */
export async function ensureBastionFloatingIP(
  ctx: FloatingIpContext,
  server: OpenStackServer,
): Promise<{ fip: FloatingIp | undefined; action?: 'created' | 'moved' | undefined }> {
  const { api, spec, status, signal } = ctx;
  const o = { signal };
  const port = firstPortID(server);
  const external = status.externalNetwork?.id;
  if (!port || !external || spec.disableExternalNetwork) return { fip: undefined };
  const [attached] = await api.network.floatingIps.list({ port_id: port }, o).all();
  if (attached) return { fip: attached };
  const want = spec.bastion?.floatingIP || status.bastion?.floatingIP;
  const description = resourceDescription(ctx.resourceName);
  if (want) {
    const [existing] = await api.network.floatingIps.list({ floating_ip_address: want }, o).all();
    if (existing)
      return { fip: await api.network.floatingIps.associate(existing.id, port, o), action: 'moved' };
    if (want === spec.bastion?.floatingIP) {
      const fip = await api.network.floatingIps.create(
        { floating_network_id: external, floating_ip_address: want, port_id: port, description },
        o,
      );
      return { fip, action: 'created' };
    }
  }
  const fip = await api.network.floatingIps.create(
    { floating_network_id: external, port_id: port, description },
    o,
  );
  return { fip, action: 'created' };
}

export interface ReleasedFloatingIPs {
  released: number;
  /**
   * Floating IPs on the bastion's ports this cluster did not make (another description): neither
   * deleted nor detached. The bastion waits for them: its port's deletion would detach them.
   */
  foreign: ForeignFloatingIp[];
}

/**
 * Releases the floating IPs on an old or deleted bastion's ports: the ones this cluster made (its
 * description) are deleted, the address the user named is detached, `keep` (the one the current
 * bastion uses, if still attached here) is left; any other is foreign and only reported.
 */
export async function releaseBastionFloatingIPs(
  ctx: FloatingIpContext,
  server: OpenStackServer,
  keep?: string,
): Promise<ReleasedFloatingIPs> {
  const { api, spec, signal } = ctx;
  const o = { signal };
  const out: ReleasedFloatingIPs = { released: 0, foreign: [] };
  for (const port of portIDs(server)) {
    for (const fip of await api.network.floatingIps.list({ port_id: port }, o).all()) {
      if (fip.floating_ip_address === keep) continue;
      const named = fip.floating_ip_address === spec.bastion?.floatingIP;
      if (!named && !isOurFloatingIp(fip, ctx.resourceName)) {
        out.foreign.push(foreignFloatingIp(fip));
        continue;
      }
      try {
        if (named) await api.network.floatingIps.disassociate(fip.id, o);
        else await api.network.floatingIps.delete(fip.id, o);
        out.released++;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
  return out;
}

/** A floating IP status recorded that hangs on nothing any more: ours, so deleted (unless the user named it). */
export async function releaseRecordedFloatingIP(ctx: FloatingIpContext): Promise<void> {
  const { api, spec, status, signal } = ctx;
  const address = status.bastion?.floatingIP;
  if (!address || address === spec.bastion?.floatingIP) return;
  const [fip] = await api.network.floatingIps.list({ floating_ip_address: address }, { signal }).all();
  if (fip && !fip.port_id && isOurFloatingIp(fip, ctx.resourceName))
    await api.network.floatingIps.delete(fip.id, { signal }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
}

/** Asks for the OpenStackServer's deletion, once; its own controller removes the server and its ports. */
export async function deleteBastionServer(
  kube: KubeClient,
  server: OpenStackServer,
  signal: AbortSignal,
): Promise<void> {
  if (server.metadata?.deletionTimestamp) return;
  try {
    await kube.delete(
      capoKinds.OpenStackServer,
      { namespace: server.metadata?.namespace ?? 'default', name: server.metadata?.name ?? '' },
      { signal },
    );
  } catch (err) {
    if (!isKubeNotFound(err)) throw err;
  }
}
