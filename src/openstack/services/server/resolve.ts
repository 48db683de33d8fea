/**
 * resolveServerSpec: every lookup a spec asks for, done once before anything is created. A filter
 * must match exactly one object (none: a DependencyError naming the filter; several: one listing
 * the ids). Ids given as ids are used as they are: Nova and Neutron refuse a wrong one at create.
 * The result is what the caller records; ports and volumes are created, found and deleted from it.
 */
import type { TagFilters } from '../../core/resource.ts';
import type { ServerApi } from './api.ts';
import { DependencyError } from './errors.ts';
import type { LookupCache } from './lookups.ts';
import { blockDeviceVolumeName, portName, rootVolumeName } from './names.ts';
import type {
  FixedIPSpec,
  ImageParam,
  NetworkParam,
  NeutronTagFilter,
  ResolvedFixedIP,
  ResolvedPortSpec,
  ResolvedServerSpec,
  ResolvedVolumeSpec,
  SecurityGroupParam,
  ServerGroupParam,
  ServerSpec,
  SubnetParam,
  VolumeAvailabilityZone,
} from './types.ts';

/**
 * Lookups made once per resolve, however many ports share a network or a security group; and,
 * with a LookupCache (the identity's), once for all the servers resolved within its time.
 */
interface Memo {
  local: Map<string, Promise<string>>;
  shared: LookupCache | undefined;
}

function memo(cache: Memo, key: unknown, lookup: () => Promise<string>): Promise<string> {
  const k = JSON.stringify(key);
  let p = cache.local.get(k);
  if (!p) {
    p = cache.shared ? cache.shared.get(k, lookup) : lookup();
    cache.local.set(k, p);
  }
  return p;
}

export async function resolveServerSpec(
  api: ServerApi,
  spec: ServerSpec,
  signal?: AbortSignal,
  lookups?: LookupCache,
): Promise<ResolvedServerSpec> {
  validate(spec);
  const cache: Memo = { local: new Map(), shared: lookups };
  const o = { signal };
  const { image, flavor, serverGroup } = spec;
  const imageID =
    'id' in image ? image.id : await memo(cache, ['image', image.filter], () => resolveImage(api, image, o));
  const flavorID =
    'id' in flavor
      ? flavor.id
      : await memo(cache, ['flavor', flavor.name], () => resolveFlavor(api, spec, o));
  const serverGroupID = !serverGroup
    ? undefined
    : 'id' in serverGroup
      ? serverGroup.id
      : await memo(cache, ['server group', serverGroup.filter], () =>
          resolveServerGroup(api, serverGroup, o),
        );
  const serverGroups = await resolveSecurityGroups(api, cache, spec.securityGroups ?? [], o);

  const ports: ResolvedPortSpec[] = [];
  for (const [index, port] of spec.ports.entries()) {
    const name = portName(spec.name, index, port.nameSuffix);
    const network = port.network;
    // No network: CAPO takes it from the subnets of the fixed IPs, which must share one.
    const bySubnets = network ? undefined : await networkOfSubnets(api, cache, name, port.fixedIPs ?? [], o);
    const networkID = network
      ? await memo(cache, ['network', network], () => resolveNetwork(api, network, o))
      : bySubnets!.networkID;
    const fixedIPs: ResolvedFixedIP[] = [];
    for (const [i, ip] of (port.fixedIPs ?? []).entries()) {
      const subnet = ip.subnet;
      const subnetID = bySubnets
        ? bySubnets.subnetIDs[i]
        : subnet
          ? await memo(cache, ['subnet', networkID, subnet], () => resolveSubnet(api, networkID, subnet, o))
          : undefined;
      fixedIPs.push({
        ...(subnetID !== undefined ? { subnet: subnetID } : {}),
        ...(ip.ipAddress !== undefined ? { ipAddress: ip.ipAddress } : {}),
      });
    }
    const own = await resolveSecurityGroups(api, cache, port.securityGroups ?? [], o);
    if (port.disablePortSecurity && own.length > 0)
      throw new DependencyError(
        'security group',
        'Invalid',
        `port ${name} disables port security but names security groups; Neutron refuses both`,
      );
    ports.push({
      name,
      ...(port.description !== undefined ? { description: port.description } : {}),
      networkID,
      tags: union(spec.tags ?? [], port.tags ?? []),
      trunk: port.trunk ?? spec.trunk ?? false,
      fixedIPs,
      securityGroups: port.disablePortSecurity ? [] : union(own, serverGroups),
      ...defined({
        adminStateUp: port.adminStateUp,
        macAddress: port.macAddress,
        allowedAddressPairs: port.allowedAddressPairs?.map((p) => ({ ...p })),
        hostID: port.hostID,
        vnicType: port.vnicType,
        profile: port.profile ? { ...port.profile } : undefined,
        disablePortSecurity: port.disablePortSecurity,
        propagateUplinkStatus: port.propagateUplinkStatus,
        valueSpecs: port.valueSpecs?.map((v) => ({ ...v })),
      }),
    });
  }

  return {
    imageID,
    flavorID,
    ...(serverGroupID !== undefined ? { serverGroupID } : {}),
    ports,
    volumes: volumeSpecs(spec),
  };
}

/** The volumes the spec asks for, root first, with their derived names. */
export function volumeSpecs(spec: ServerSpec): ResolvedVolumeSpec[] {
  const out: ResolvedVolumeSpec[] = [];
  const zone = (az: VolumeAvailabilityZone | undefined) =>
    az?.from === 'Name' ? az.name : spec.availabilityZone;
  if (spec.rootVolume) {
    out.push({
      name: rootVolumeName(spec.name),
      root: true,
      sizeGiB: spec.rootVolume.sizeGiB,
      ...defined({ type: spec.rootVolume.type, availabilityZone: zone(spec.rootVolume.availabilityZone) }),
    });
  }
  for (const bd of spec.additionalBlockDevices ?? []) {
    if (bd.storage.type !== 'Volume') continue;
    out.push({
      name: blockDeviceVolumeName(spec.name, bd.name),
      root: false,
      sizeGiB: bd.sizeGiB,
      tag: bd.name,
      ...defined({
        type: bd.storage.volume?.type,
        availabilityZone: zone(bd.storage.volume?.availabilityZone),
      }),
    });
  }
  return out;
}

function validate(spec: ServerSpec): void {
  const invalid = (message: string) => new DependencyError('server', 'Invalid', message);
  if (!spec.name) throw invalid('the server has no name');
  if (spec.ports.length === 0) throw invalid(`server ${spec.name} has no ports; at least one is required`);
  const names = new Set<string>();
  for (const [i, p] of spec.ports.entries()) {
    const name = portName(spec.name, i, p.nameSuffix);
    if (names.has(name)) throw invalid(`two ports are named ${name}; give them distinct nameSuffix`);
    names.add(name);
  }
  const devices = new Set<string>();
  for (const bd of spec.additionalBlockDevices ?? []) {
    if (bd.name === 'root') throw invalid('an additional block device cannot be named "root"');
    if (devices.has(bd.name)) throw invalid(`two additional block devices are named ${bd.name}`);
    devices.add(bd.name);
    if (!(bd.sizeGiB >= 1)) throw invalid(`block device ${bd.name} needs sizeGiB >= 1`);
  }
  if (spec.rootVolume && !(spec.rootVolume.sizeGiB >= 1)) throw invalid('the root volume needs sizeGiB >= 1');
}

async function resolveImage(api: ServerApi, image: ImageParam, o: { signal?: AbortSignal | undefined }) {
  if ('id' in image) return image.id;
  const { name, tags } = image.filter;
  if (name === undefined && (tags?.length ?? 0) === 0)
    throw new DependencyError('image', 'Invalid', 'the image filter is empty; give a name, tags or an id');
  const found = await api.image.images
    .list({ ...(name !== undefined ? { name } : {}), ...(tags?.length ? { tag: tags } : {}) }, o)
    .all();
  return DependencyError.exactlyOne('image', describe('filter', image.filter), ids(found));
}

async function resolveFlavor(api: ServerApi, spec: ServerSpec, o: { signal?: AbortSignal | undefined }) {
  const { flavor } = spec;
  if ('id' in flavor) return flavor.id;
  const found = await api.compute.flavors.findByName(flavor.name, o);
  if (!found) throw new DependencyError('flavor', 'NotFound', `no flavor is named "${flavor.name}"`);
  return found.id;
}

async function resolveServerGroup(
  api: ServerApi,
  group: ServerGroupParam,
  o: { signal?: AbortSignal | undefined },
) {
  if ('id' in group) return group.id;
  // Nova has no name filter on server groups.
  const all = await api.compute.serverGroups.list({}, o);
  return DependencyError.exactlyOne(
    'server group',
    describe('filter', group.filter),
    ids(all.filter((g) => g.name === group.filter.name)),
  );
}

async function resolveNetwork(
  api: ServerApi,
  network: NetworkParam,
  o: { signal?: AbortSignal | undefined },
) {
  if ('id' in network) return network.id;
  const f = network.filter;
  const query = {
    ...defined({ name: f.name, description: f.description, project_id: f.projectID }),
    ...tagQuery(f),
  };
  if (Object.keys(query).length === 0)
    throw new DependencyError('network', 'Invalid', 'a network filter is empty; give a name, tags or an id');
  const found = await api.network.networks.list(query, o).all();
  return DependencyError.exactlyOne('network', describe('filter', f), ids(found));
}

async function resolveSubnet(
  api: ServerApi,
  networkID: string,
  subnet: SubnetParam,
  o: { signal?: AbortSignal | undefined },
) {
  if ('id' in subnet) return subnet.id;
  const f = subnet.filter;
  const found = await api.network.subnets
    .list(
      {
        network_id: networkID,
        ...defined({
          name: f.name,
          description: f.description,
          project_id: f.projectID,
          ip_version: f.ipVersion,
          gateway_ip: f.gatewayIP,
          cidr: f.cidr,
          ipv6_address_mode: f.ipv6AddressMode,
          ipv6_ra_mode: f.ipv6RAMode,
        }),
        ...tagQuery(f),
      },
      o,
    )
    .all();
  return DependencyError.exactlyOne('subnet', `${describe('filter', f)} on network ${networkID}`, ids(found));
}

/**
 * The network of a port given only subnets: each subnet looked up (by id or by a filter across all
 * networks), all on one network. A fixed IP without a subnet leaves nothing to derive it from.
 */
async function networkOfSubnets(
  api: ServerApi,
  cache: Memo,
  port: string,
  fixedIPs: readonly FixedIPSpec[],
  o: { signal?: AbortSignal | undefined },
): Promise<{ networkID: string; subnetIDs: (string | undefined)[] }> {
  if (fixedIPs.length === 0 || fixedIPs.some((ip) => !ip.subnet))
    throw new DependencyError(
      'network',
      'Invalid',
      `port ${port} has no network and not every fixed IP names a subnet; give the port a network`,
    );
  const found: { id: string; networkID: string }[] = [];
  for (const ip of fixedIPs) {
    const subnet = ip.subnet!;
    const key = JSON.stringify(['subnet-any-network', subnet]);
    const [id, networkID] = JSON.parse(
      await memo(cache, key, async () => {
        const query =
          'id' in subnet
            ? { id: subnet.id }
            : {
                ...defined({
                  name: subnet.filter.name,
                  description: subnet.filter.description,
                  project_id: subnet.filter.projectID,
                  ip_version: subnet.filter.ipVersion,
                  gateway_ip: subnet.filter.gatewayIP,
                  cidr: subnet.filter.cidr,
                  ipv6_address_mode: subnet.filter.ipv6AddressMode,
                  ipv6_ra_mode: subnet.filter.ipv6RAMode,
                }),
                ...tagQuery(subnet.filter),
              };
        const list = await api.network.subnets.list(query, o).all();
        const what = 'id' in subnet ? `id ${subnet.id}` : describe('filter', subnet.filter);
        const one = DependencyError.exactlyOne('subnet', what, ids(list));
        return JSON.stringify([one, list.find((s) => s.id === one)!.network_id]);
      }),
    ) as [string, string];
    found.push({ id, networkID });
  }
  const networks = union(found.map((f) => f.networkID));
  if (networks.length > 1)
    throw new DependencyError(
      'network',
      'Invalid',
      `port ${port} has no network and its fixed IPs name subnets of different networks (${networks.join(', ')}); give the port a network, or subnets of one network`,
    );
  return { networkID: networks[0]!, subnetIDs: found.map((f) => f.id) };
}

async function resolveSecurityGroups(
  api: ServerApi,
  cache: Memo,
  groups: readonly SecurityGroupParam[],
  o: { signal?: AbortSignal | undefined },
): Promise<string[]> {
  const out: string[] = [];
  for (const group of groups) {
    const id = await memo(cache, ['security group', group], async () => {
      if ('id' in group) return group.id;
      const f = group.filter;
      const query = {
        ...defined({ name: f.name, description: f.description, project_id: f.projectID }),
        ...tagQuery(f),
      };
      if (Object.keys(query).length === 0)
        throw new DependencyError('security group', 'Invalid', 'a security group filter is empty');
      const found = await api.network.securityGroups.list(query, o).all();
      return DependencyError.exactlyOne('security group', describe('filter', f), ids(found));
    });
    out.push(id);
  }
  return union(out);
}

function tagQuery(f: NeutronTagFilter): TagFilters {
  const out: TagFilters = {};
  if (f.tags?.length) out.tags = f.tags;
  if (f.tagsAny?.length) out['tags-any'] = f.tagsAny;
  if (f.notTags?.length) out['not-tags'] = f.notTags;
  if (f.notTagsAny?.length) out['not-tags-any'] = f.notTagsAny;
  return out;
}

const ids = (list: readonly { id: string }[]) => list.map((x) => x.id);

/** `filter {name: "x", tags: [a,b]}` for messages. */
function describe(what: string, filter: object): string {
  const parts = Object.entries(filter)
    .filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
  return `${what} {${parts.join(', ')}}`;
}

/** The unique values, in first-seen order. */
export function union<T>(...lists: readonly (readonly T[])[]): T[] {
  return [...new Set(lists.flat())];
}

/** The object without its undefined fields. */
export function defined<T extends Record<string, unknown>>(
  o: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
