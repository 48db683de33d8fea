/**
 * What every binding does once the pod's end is inside the namespace (upstream's `_configure_l3`
 * plus the driver's rename/MAC/MTU/up): name, MAC, MTU, addresses, routes, link up; and the CHECK
 * of the same. Every step is a `replace` or a set, so doing it twice changes nothing.
 */
import { ipVersion } from '../../../lib/cidr.ts';
import { BindingCheckError, type PodInterface } from './types.ts';
import { isNoSuchDevice, type Ip, type IpLink } from './ip.ts';

const family = (ip: string): 4 | 6 => (ipVersion(ip) === 6 ? 6 : 4);

function isDefault(dst: string): boolean {
  return dst === '0.0.0.0/0' || dst === '::/0' || dst === 'default';
}

/** The pod end (named `current` now) renamed to `iface.ifname` and configured in `netns`. */
export async function configurePodEnd(
  ip: Ip,
  current: string,
  iface: PodInterface,
  netns: string,
  signal?: AbortSignal,
): Promise<void> {
  const link = ['link', 'set', 'dev'];
  const now = await ip.link(current, netns, signal);
  // A link must be down to be renamed or to take a new MAC; an interface already as described
  // (a runtime's repeated ADD) is not taken down.
  if (current !== iface.ifname || now?.address?.toLowerCase() !== iface.mac.toLowerCase()) {
    await ip.run([...link, current, 'down'], netns, signal);
    if (current !== iface.ifname) await ip.run([...link, current, 'name', iface.ifname], netns, signal);
    await ip.run([...link, iface.ifname, 'address', iface.mac], netns, signal);
  }
  if (iface.mtu !== undefined && now?.mtu !== iface.mtu)
    await ip.run([...link, iface.ifname, 'mtu', String(iface.mtu)], netns, signal);
  await ip.run([...link, iface.ifname, 'up'], netns, signal);
  for (const a of iface.addresses) {
    const v6 = family(a.ip) === 6 ? ['nodad'] : [];
    await ip.run(
      ['address', 'replace', `${a.ip}/${a.prefixLength}`, 'dev', iface.ifname, ...v6],
      netns,
      signal,
    );
  }
  for (const r of iface.routes) {
    const v = family(r.gw ?? r.dst.split('/')[0] ?? '');
    const dst = isDefault(r.dst) ? 'default' : r.dst;
    const via = r.gw ? ['via', r.gw] : [];
    await ip.run([`-${v}`, 'route', 'replace', dst, ...via, 'dev', iface.ifname], netns, signal);
  }
}

/** The pod end as `configurePodEnd` left it, or a `BindingCheckError` naming the first difference. */
export async function checkPodEnd(
  ip: Ip,
  iface: PodInterface,
  netns: string,
  signal?: AbortSignal,
): Promise<IpLink> {
  const fail = (msg: string) => new BindingCheckError(iface.ifname, netns, msg);
  const link = await ip.link(iface.ifname, netns, signal);
  if (!link) throw fail('no such interface');
  if (link.address?.toLowerCase() !== iface.mac.toLowerCase())
    throw fail(`MAC is ${String(link.address)}, expected ${iface.mac}`);
  if (iface.mtu !== undefined && link.mtu !== iface.mtu)
    throw fail(`MTU is ${String(link.mtu)}, expected ${iface.mtu}`);
  if (!link.flags?.includes('UP')) throw fail('the interface is down');
  const addresses = await ip.addresses(iface.ifname, netns, signal);
  for (const a of iface.addresses) {
    if (!addresses.some((x) => x.local === a.ip && x.prefixlen === a.prefixLength))
      throw fail(`address ${a.ip}/${a.prefixLength} is missing`);
  }
  for (const r of iface.routes) {
    const routes = await ip.routes(family(r.gw ?? r.dst.split('/')[0] ?? ''), netns, signal);
    const dst = isDefault(r.dst) ? 'default' : r.dst;
    const found = routes.some(
      (x) => x.dst === dst && x.dev === iface.ifname && (r.gw === undefined || x.gateway === r.gw),
    );
    if (!found) throw fail(`route ${r.dst}${r.gw ? ` via ${r.gw}` : ''} is missing`);
  }
  return link;
}

/** Deletes `name` in `netns` (or on the host); absent is fine. */
export async function deleteLink(ip: Ip, name: string, netns?: string, signal?: AbortSignal): Promise<void> {
  try {
    await ip.run(['link', 'del', 'dev', name], netns, signal);
  } catch (err) {
    if (!isNoSuchDevice(err)) throw err;
  }
}
