/**
 * Test fixtures shared by the resource modules' tests: a cleanup stack, a scratch network with a
 * subnet, an external network for floating IPs, and waiter timings that suit the emulator (ms) and a
 * real cloud (seconds).
 */
import type { OpenStackClient } from '../../../client.ts';
import { isNotFound } from '../../../core/errors.ts';
import { unique, type ClientTarget } from '../../../core/testing/target.ts';
import type { Network } from '../networks.ts';
import type { Subnet } from '../subnets.ts';

/** Undo steps run in reverse order; what is already gone (404) is fine, anything else is reported once all ran. */
export class Cleanup {
  private readonly steps: { what: string; run: () => Promise<unknown> }[] = [];

  add(what: string, run: () => Promise<unknown>): void {
    this.steps.push({ what, run });
  }

  async run(): Promise<void> {
    const failures: string[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step.run();
      } catch (err) {
        if (!isNotFound(err)) failures.push(`${step.what}: ${(err as Error).message}`);
      }
    }
    if (failures.length > 0) throw new Error(`cleanup failed:\n${failures.join('\n')}`);
  }
}

/** A /24 in 10.x unlikely to collide with another run's. */
export const randomCidr = (): string =>
  `10.${20 + Math.floor(Math.random() * 200)}.${Math.floor(Math.random() * 250)}.0/24`;

/** Waiter timings: milliseconds on the emulator, seconds on a real cloud. */
export function waitTimings(t: ClientTarget): {
  timeoutMs: number;
  intervalMs: number;
  maxIntervalMs: number;
} {
  return t.sim
    ? { timeoutMs: 10_000, intervalMs: 5, maxIntervalMs: 50 }
    : { timeoutMs: 300_000, intervalMs: 250, maxIntervalMs: 2_000 };
}

/** A network with one IPv4 subnet, deleted by `cleanup` (after what is created later). */
export async function scratchNetwork(
  os: OpenStackClient,
  cleanup: Cleanup,
  prefix = 'client',
): Promise<{ network: Network; subnet: Subnet }> {
  const network = await os.network.networks.create({ name: unique(`${prefix}-net`) });
  cleanup.add(`network ${network.id}`, () => os.network.networks.delete(network.id));
  const subnet = await os.network.subnets.create({
    network_id: network.id,
    cidr: randomCidr(),
    ip_version: 4,
    name: unique(`${prefix}-subnet`),
  });
  cleanup.add(`subnet ${subnet.id}`, () => os.network.subnets.delete(subnet.id));
  return { network, subnet };
}

/**
 * An external network the demo user can take floating IPs from: one the cloud has (the emulator's
 * `public`), else one the admin creates for the test. Undefined when neither is possible.
 */
export async function externalNetwork(
  t: ClientTarget,
  demo: OpenStackClient,
  cleanup: Cleanup,
): Promise<Network | undefined> {
  const existing = await demo.network.networks.list({ 'router:external': true }).all();
  for (const net of existing) if (net.subnets.length > 0) return net;
  if (!t.admin) return undefined;
  const admin = await t.client(t.admin);
  const network = await admin.network.networks.create({
    name: unique('client-ext'),
    'router:external': true,
  });
  cleanup.add(`external network ${network.id}`, () => admin.network.networks.delete(network.id));
  const subnet = await admin.network.subnets.create({
    network_id: network.id,
    cidr: `198.18.${Math.floor(Math.random() * 250)}.0/24`,
    ip_version: 4,
    enable_dhcp: false,
  });
  cleanup.add(`external subnet ${subnet.id}`, () => admin.network.subnets.delete(subnet.id));
  return { ...network, subnets: [subnet.id] };
}
