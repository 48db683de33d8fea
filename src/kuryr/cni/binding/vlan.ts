/**
 * The `vlan` binding, upstream's default for nested pods (`[binding] default_driver =
 * kuryr.lib.binding.drivers.vlan`, kuryr-kubernetes `cni/binding/nested.py` `VlanDriver`): the pod's
 * Neutron port is a subport of the VM's trunk with a VLAN id, so the pod's interface is an 802.1Q
 * sub-interface `<link_iface>.<vlan id>` of the VM's trunk-parent link, created on the host, moved
 * into the pod's namespace and renamed there.
 */
import { checkPodEnd, configurePodEnd, deleteLink } from './l3.ts';
import { Ip, IpCommandError, netnsExists } from './ip.ts';
import { BindingUnsupportedError, type BindingDriver, type PodInterface, type Sandbox } from './types.ts';

export interface VlanOptions {
  /** The trunk parent's link on this host (`[binding] link_iface`). */
  linkIface: string;
  ip?: Ip;
}

/** What the kernel says when it has no 802.1Q support (no `8021q` module). */
const NO_VLAN_SUPPORT = /Unknown device type|Operation not supported|not supported/i;

/** `<link>.<vlan id>` when it fits IFNAMSIZ (15 characters), else `vlan<id>-<link>` cut to fit. */
export function vlanLinkName(linkIface: string, vlanId: number): string {
  const name = `${linkIface}.${vlanId}`;
  return name.length <= 15 ? name : `vlan${vlanId}-${linkIface}`.slice(0, 15);
}

export class VlanBinding implements BindingDriver {
  readonly name = 'vlan';
  private readonly linkIface: string;
  private readonly ip: Ip;

  constructor(options: VlanOptions) {
    this.linkIface = options.linkIface;
    this.ip = options.ip ?? new Ip();
  }

  async connect(iface: PodInterface, sandbox: Sandbox, signal?: AbortSignal): Promise<void> {
    const { ip } = this;
    if (iface.vlanId === undefined)
      throw new BindingUnsupportedError(
        'vlan',
        `the VIF of ${iface.ifname} has no VLAN id`,
        'the vlan binding needs nested VLAN VIFs ([kubernetes] pod_vif_driver = nested-vlan); use [binding] default_driver = veth otherwise',
      );
    const existing = await ip.link(iface.ifname, sandbox.netns, signal);
    if (existing && existing.address?.toLowerCase() === iface.mac.toLowerCase()) {
      await configurePodEnd(ip, iface.ifname, iface, sandbox.netns, signal);
      return;
    }
    if (!(await ip.link(this.linkIface, undefined, signal)))
      throw new BindingUnsupportedError(
        'vlan',
        `link_iface ${this.linkIface} (the trunk parent's link) does not exist on this host`,
        'set [binding] link_iface to the interface of the VM whose port is the trunk parent',
      );
    if (existing) await deleteLink(ip, iface.ifname, sandbox.netns, signal);
    const temp = vlanLinkName(this.linkIface, iface.vlanId);
    await this.removeLeftover(temp, iface.vlanId, signal);
    try {
      await ip.run(
        ['link', 'add', 'link', this.linkIface, 'name', temp, 'type', 'vlan', 'id', String(iface.vlanId)],
        undefined,
        signal,
      );
    } catch (err) {
      if (err instanceof IpCommandError && NO_VLAN_SUPPORT.test(err.stderr))
        throw new BindingUnsupportedError(
          'vlan',
          `this kernel cannot create 802.1Q VLAN devices (ip said: ${err.stderr.trim()}), so ${temp} for ${iface.ifname} was not made`,
          'load the 8021q kernel module (modprobe 8021q), or on a host that attaches pods to a bridge set [binding] default_driver = veth',
        );
      throw err;
    }
    try {
      await ip.run(['link', 'set', 'dev', temp, 'netns', sandbox.netns], undefined, signal);
      await configurePodEnd(ip, temp, iface, sandbox.netns, signal);
    } catch (err) {
      // Wherever it got to, nothing half-made stays: on the host, or in the pod under either name.
      await deleteLink(ip, temp).catch(() => undefined);
      if (netnsExists(sandbox.netns)) {
        await deleteLink(ip, temp, sandbox.netns).catch(() => undefined);
        await deleteLink(ip, iface.ifname, sandbox.netns).catch(() => undefined);
      }
      throw err;
    }
  }

  /**
   * Upstream's binding leaves the sub-interface to die with the namespace; removing it here as well
   * frees its VLAN id at once when the runtime keeps the namespace (upstream's "VLAN ID conflict").
   */
  async disconnect(ifname: string, sandbox: Sandbox, signal?: AbortSignal): Promise<void> {
    if (netnsExists(sandbox.netns)) await deleteLink(this.ip, ifname, sandbox.netns, signal);
  }

  check(iface: PodInterface, sandbox: Sandbox, signal?: AbortSignal): Promise<void> {
    return checkPodEnd(this.ip, iface, sandbox.netns, signal).then(() => undefined);
  }

  /**
   * A sub-interface with this VLAN id left on the host by a daemon killed between create and move
   * (upstream's "hanging interface ... leftover from a kuryr-daemon restart"): ours, removed. A link
   * of that name that is not this VLAN of this link is someone else's and is left alone.
   */
  private async removeLeftover(name: string, vlanId: number, signal?: AbortSignal): Promise<void> {
    const link = await this.ip.linkDetails(name, undefined, signal);
    if (!link) return;
    if (
      link.linkinfo?.info_kind === 'vlan' &&
      link.linkinfo.info_data?.id === vlanId &&
      link.link === this.linkIface
    )
      await deleteLink(this.ip, name, undefined, signal);
  }
}
