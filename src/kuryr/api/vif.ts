/**
 * A pod's VIF as kuryr stores it in `KuryrPort.status.vifs[ifname].vif`: an os-vif versioned-object
 * primitive (`VIFVlanNested` 1.0 holding a `Network` 1.1 with its `SubnetList`, `FixedIPList` and
 * `RouteList`), exactly as upstream's controller writes it, so upstream's CNI reads ours and ours
 * reads upstream's. Code works on the flat `Vif`; `vifPrimitive` and `readVif` convert.
 */

export interface VifRoute {
  cidr: string;
  gateway: string;
}

export interface VifSubnet {
  /** e.g. `10.11.9.0/24`. */
  cidr: string;
  gateway?: string | undefined;
  /** The port's fixed IPs in this subnet. */
  ips: string[];
  routes: VifRoute[];
  dns: string[];
}

export interface Vif {
  /** The Neutron port id. */
  id: string;
  /** The MAC address. */
  address: string;
  /** `tap` + the first 11 characters of the port id (os-vif's device name). */
  vifName: string;
  /** The subport's VLAN id on the node's trunk; absent for a VIF that is not nested VLAN. */
  vlanId?: number | undefined;
  /** The port is ACTIVE in Neutron. */
  active: boolean;
  network: {
    id: string;
    /** upstream: `ns/<namespace>-net` or the network's name. */
    label?: string | undefined;
    mtu?: number | undefined;
    subnets: VifSubnet[];
  };
  hasTrafficFiltering?: boolean | undefined;
  preserveOnDelete?: boolean | undefined;
  /** os-vif plugin; kuryr's nested VIFs use `noop`. */
  plugin?: string | undefined;
}

/** A versioned-object primitive: `{versioned_object.name, .namespace, .version, .data}`. */
export interface VersionedObject<T = Record<string, unknown>> {
  'versioned_object.name': string;
  'versioned_object.namespace': string;
  'versioned_object.version': string;
  'versioned_object.data': T;
}

export type VifPrimitive = VersionedObject;

/** The os-vif device name of a port (`tap` + 11 characters of its id). */
export function vifName(portId: string): string {
  return `tap${portId.slice(0, 11)}`;
}

function vo<T extends Record<string, unknown>>(name: string, version: string, data: T): VersionedObject<T> {
  return {
    'versioned_object.name': name,
    'versioned_object.namespace': 'os_vif',
    'versioned_object.version': version,
    'versioned_object.data': data,
  };
}

const list = (name: string, objects: VersionedObject[]) => vo(name, '1.0', { objects });

/** The primitive upstream writes for a nested VLAN VIF (VIFVlanNested 1.0). */
export function vifPrimitive(vif: Vif): VifPrimitive {
  const subnets = vif.network.subnets.map((s) =>
    vo('Subnet', '1.0', {
      cidr: s.cidr,
      dns: [...s.dns],
      ...(s.gateway !== undefined ? { gateway: s.gateway } : {}),
      ips: list(
        'FixedIPList',
        s.ips.map((address) => vo('FixedIP', '1.0', { address })),
      ),
      routes: list(
        'RouteList',
        s.routes.map((r) => vo('Route', '1.0', { cidr: r.cidr, gateway: r.gateway })),
      ),
    }),
  );
  const network = vo('Network', '1.1', {
    id: vif.network.id,
    ...(vif.network.label !== undefined ? { label: vif.network.label } : {}),
    ...(vif.network.mtu !== undefined ? { mtu: vif.network.mtu } : {}),
    multi_host: false,
    should_provide_bridge: false,
    should_provide_vlan: false,
    subnets: list('SubnetList', subnets),
  });
  return vo('VIFVlanNested', '1.0', {
    active: vif.active,
    address: vif.address,
    has_traffic_filtering: vif.hasTrafficFiltering ?? false,
    id: vif.id,
    network,
    plugin: vif.plugin ?? 'noop',
    preserve_on_delete: vif.preserveOnDelete ?? false,
    vif_name: vif.vifName,
    ...(vif.vlanId !== undefined ? { vlan_id: vif.vlanId } : {}),
  });
}

/** Why a stored VIF cannot be read: names the field, for the Event or CNI error that reports it. */
export class VifFormatError extends Error {
  override readonly name = 'VifFormatError';
}

type Rec = Record<string, unknown>;

function data(value: unknown, what: string): Rec {
  if (typeof value !== 'object' || value === null)
    throw new VifFormatError(`${what}: not a versioned object`);
  const d = (value as Rec)['versioned_object.data'];
  if (typeof d !== 'object' || d === null) throw new VifFormatError(`${what}: no versioned_object.data`);
  return d as Rec;
}

function objects(value: unknown, what: string): unknown[] {
  if (value === undefined) return [];
  const objs = data(value, what).objects;
  if (!Array.isArray(objs)) throw new VifFormatError(`${what}: no objects list`);
  return objs;
}

function str(d: Rec, key: string, what: string): string {
  const v = d[key];
  if (typeof v !== 'string' || v === '') throw new VifFormatError(`${what}.${key}: missing`);
  return v;
}

const optStr = (d: Rec, key: string): string | undefined => (typeof d[key] === 'string' ? d[key] : undefined);
const optNum = (d: Rec, key: string): number | undefined => (typeof d[key] === 'number' ? d[key] : undefined);

/** Reads a stored primitive (any os-vif VIF kind; `vlanId` only when it has one). */
export function readVif(primitive: unknown): Vif {
  const d = data(primitive, 'vif');
  const net = data(d.network, 'vif.network');
  const subnets = objects(net.subnets, 'vif.network.subnets').map((s, i): VifSubnet => {
    const what = `vif.network.subnets[${i}]`;
    const sd = data(s, what);
    const gateway = optStr(sd, 'gateway');
    return {
      cidr: str(sd, 'cidr', what),
      ...(gateway !== undefined ? { gateway } : {}),
      ips: objects(sd.ips, `${what}.ips`).map((ip, j) =>
        str(data(ip, `${what}.ips[${j}]`), 'address', `${what}.ips[${j}]`),
      ),
      routes: objects(sd.routes, `${what}.routes`).map((r, j) => {
        const rd = data(r, `${what}.routes[${j}]`);
        return {
          cidr: str(rd, 'cidr', `${what}.routes[${j}]`),
          gateway: str(rd, 'gateway', `${what}.routes[${j}]`),
        };
      }),
      dns: Array.isArray(sd.dns) ? sd.dns.filter((x): x is string => typeof x === 'string') : [],
    };
  });
  const label = optStr(net, 'label');
  const mtu = optNum(net, 'mtu');
  const vlanId = optNum(d, 'vlan_id');
  return {
    id: str(d, 'id', 'vif'),
    address: str(d, 'address', 'vif'),
    vifName: optStr(d, 'vif_name') ?? vifName(str(d, 'id', 'vif')),
    ...(vlanId !== undefined ? { vlanId } : {}),
    active: d.active === true,
    network: {
      id: str(net, 'id', 'vif.network'),
      ...(label !== undefined ? { label } : {}),
      ...(mtu !== undefined ? { mtu } : {}),
      subnets,
    },
    hasTrafficFiltering: d.has_traffic_filtering === true,
    preserveOnDelete: d.preserve_on_delete === true,
    plugin: optStr(d, 'plugin') ?? 'noop',
  };
}

/** The default VIF of a KuryrPort status (`vifs[ifname]` with `default: true`, else `eth0`). */
export function defaultVif(
  vifs: Record<string, { default?: boolean | undefined; vif?: unknown }> | undefined,
): { ifname: string; vif: Vif } | undefined {
  if (!vifs) return undefined;
  const entry =
    Object.entries(vifs).find(([, v]) => v.default === true) ??
    (vifs.eth0 ? (['eth0', vifs.eth0] as const) : undefined);
  if (!entry || entry[1].vif === undefined) return undefined;
  return { ifname: entry[0], vif: readVif(entry[1].vif) };
}
