/**
 * The `veth` binding (shiftstack's; upstream's closest is its OVS/bridge `VIFBridge` driver): a
 * veth pair whose host end is a port of a Linux bridge on the host (created if absent) and whose
 * other end is the pod's interface. For hosts that attach pods to a bridge rather than to a VLAN of
 * a trunk — and the binding that works on kernels without 802.1Q.
 */
import { createHash } from 'node:crypto';
import { checkPodEnd, configurePodEnd, deleteLink } from './l3.ts';
import { Ip, IpCommandError, netnsExists } from './ip.ts';
import { BindingCheckError, type BindingDriver, type PodInterface, type Sandbox } from './types.ts';

export interface VethOptions {
  /** The host bridge the host ends join (`[binding] veth_bridge`). */
  bridge: string;
  ip?: Ip;
}

/**
 * The host end's name, from the container and the interface alone so DEL finds it without state:
 * `kv` and 12 hex digits of a hash (IFNAMSIZ allows 15 characters).
 */
export function hostEndName(containerId: string, ifname: string): string {
  return `kv${createHash('sha256').update(`${containerId}/${ifname}`).digest('hex').slice(0, 12)}`;
}

/** The pod end's name while it is still on the host, before it moves and takes CNI_IFNAME. */
function tempPodEndName(containerId: string, ifname: string): string {
  return `kp${hostEndName(containerId, ifname).slice(2)}`;
}

export class VethBinding implements BindingDriver {
  readonly name = 'veth';
  private readonly bridge: string;
  private readonly ip: Ip;

  constructor(options: VethOptions) {
    this.bridge = options.bridge;
    this.ip = options.ip ?? new Ip();
  }

  async connect(iface: PodInterface, sandbox: Sandbox, signal?: AbortSignal): Promise<void> {
    const { ip } = this;
    const host = hostEndName(sandbox.containerId, iface.ifname);
    await this.ensureBridge(signal);
    const existing = await ip.link(iface.ifname, sandbox.netns, signal);
    const sameMac = existing?.address?.toLowerCase() === iface.mac.toLowerCase();
    if (existing && sameMac && (await ip.link(host, undefined, signal))) {
      // A second ADD (a runtime retry): bring it to the described state again.
      await configurePodEnd(ip, iface.ifname, iface, sandbox.netns, signal);
      await this.attachHostEnd(host, iface, signal);
      return;
    }
    // Something else by that name, or a half-made pair of an earlier try: start clean.
    if (existing) await deleteLink(ip, iface.ifname, sandbox.netns, signal);
    await deleteLink(ip, host, undefined, signal);
    const temp = tempPodEndName(sandbox.containerId, iface.ifname);
    await deleteLink(ip, temp, undefined, signal);
    await ip.run(['link', 'add', 'name', host, 'type', 'veth', 'peer', 'name', temp], undefined, signal);
    try {
      await ip.run(['link', 'set', 'dev', temp, 'netns', sandbox.netns], undefined, signal);
      await configurePodEnd(ip, temp, iface, sandbox.netns, signal);
      await this.attachHostEnd(host, iface, signal);
    } catch (err) {
      // Deleting one end deletes the pair, wherever the other end went: nothing half-made stays.
      await deleteLink(ip, host).catch(() => undefined);
      throw err;
    }
  }

  async disconnect(ifname: string, sandbox: Sandbox, signal?: AbortSignal): Promise<void> {
    if (netnsExists(sandbox.netns)) await deleteLink(this.ip, ifname, sandbox.netns, signal);
    // With the namespace gone the kernel removed the pair already; an end left on the host is ours.
    await deleteLink(this.ip, hostEndName(sandbox.containerId, ifname), undefined, signal);
  }

  async check(iface: PodInterface, sandbox: Sandbox, signal?: AbortSignal): Promise<void> {
    await checkPodEnd(this.ip, iface, sandbox.netns, signal);
    const host = await this.ip.link(hostEndName(sandbox.containerId, iface.ifname), undefined, signal);
    const fail = (msg: string) => new BindingCheckError(iface.ifname, sandbox.netns, msg);
    if (!host) throw fail('the host end of its veth pair is missing');
    if (host.master !== this.bridge)
      throw fail(`the host end ${host.ifname} is not on bridge ${this.bridge} (on ${host.master ?? 'none'})`);
    if (!host.flags?.includes('UP')) throw fail(`the host end ${host.ifname} is down`);
  }

  /** The host bridge, created and up (two ADDs racing to create it both succeed). */
  private async ensureBridge(signal?: AbortSignal): Promise<void> {
    if (!(await this.ip.link(this.bridge, undefined, signal))) {
      try {
        await this.ip.run(['link', 'add', 'name', this.bridge, 'type', 'bridge'], undefined, signal);
      } catch (err) {
        if (!(err instanceof IpCommandError && /File exists/i.test(err.stderr))) throw err;
      }
    }
    await this.ip.run(['link', 'set', 'dev', this.bridge, 'up'], undefined, signal);
  }

  private async attachHostEnd(host: string, iface: PodInterface, signal?: AbortSignal): Promise<void> {
    const set = ['link', 'set', 'dev', host];
    if (iface.mtu !== undefined) await this.ip.run([...set, 'mtu', String(iface.mtu)], undefined, signal);
    await this.ip.run([...set, 'master', this.bridge], undefined, signal);
    await this.ip.run([...set, 'up'], undefined, signal);
  }
}
