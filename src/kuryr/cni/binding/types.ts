/**
 * What a binding driver is asked to do: plug one pod interface into a network namespace, check it,
 * unplug it. The interface is described by what the kernel is told (name, MAC, MTU, VLAN id,
 * addresses, routes), read from the KuryrPort's VIF by `podInterface` (../interface.ts).
 */

/** An address with its prefix length, as `ip address add` takes it. */
export interface InterfaceAddress {
  /** `10.0.0.5`, `fd00::5`. */
  ip: string;
  prefixLength: number;
  /** The subnet's gateway, reported in the CNI result. */
  gateway?: string | undefined;
}

export interface InterfaceRoute {
  /** A CIDR; `0.0.0.0/0` and `::/0` are the default routes. */
  dst: string;
  gw?: string | undefined;
}

/** One pod interface, as the kernel is to see it. */
export interface PodInterface {
  /** The name inside the pod (CNI_IFNAME). */
  ifname: string;
  /** Lower-case `aa:bb:cc:dd:ee:ff`: the Neutron port's MAC. */
  mac: string;
  /** The network's MTU; absent leaves the kernel's. */
  mtu?: number | undefined;
  /** The trunk subport's segmentation id (the `vlan` binding needs it). */
  vlanId?: number | undefined;
  addresses: InterfaceAddress[];
  routes: InterfaceRoute[];
  dns: { nameservers: string[] };
}

/** Where the interface goes. */
export interface Sandbox {
  /** The network namespace's path (CNI_NETNS). */
  netns: string;
  /** The runtime's container id (CNI_CONTAINERID): names the host side of a veth pair. */
  containerId: string;
}

export const BINDING_DRIVERS = ['vlan', 'veth'] as const;
export type BindingDriverName = (typeof BINDING_DRIVERS)[number];

export interface BindingDriver {
  readonly name: BindingDriverName;
  /**
   * Plugs `iface` into the sandbox. Idempotent: an interface already there with the same MAC is
   * brought to the described state; anything else by that name is replaced. On failure nothing this
   * call made is left behind.
   */
  connect(iface: PodInterface, sandbox: Sandbox, signal?: AbortSignal): Promise<void>;
  /** Removes what `connect` made; nothing there (or no namespace any more) is success. */
  disconnect(ifname: string, sandbox: Sandbox, signal?: AbortSignal): Promise<void>;
  /** Throws a `BindingCheckError` naming the first difference from `iface`. */
  check(iface: PodInterface, sandbox: Sandbox, signal?: AbortSignal): Promise<void>;
}

/** CHECK found the sandbox not as ADD left it. */
export class BindingCheckError extends Error {
  override readonly name = 'BindingCheckError';
  readonly ifname: string;
  readonly netns: string;
  constructor(ifname: string, netns: string, message: string) {
    super(`${ifname} in ${netns}: ${message}`);
    this.ifname = ifname;
    this.netns = netns;
  }
}

/** A binding this host cannot do (a kernel without the device type, a missing link); carries the fix. */
export class BindingUnsupportedError extends Error {
  override readonly name = 'BindingUnsupportedError';
  readonly driver: BindingDriverName;
  readonly fix: string;
  constructor(driver: BindingDriverName, message: string, fix: string) {
    super(message);
    this.driver = driver;
    this.fix = fix;
  }
}
