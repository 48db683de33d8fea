import assert from 'node:assert/strict';
import { unique, type Session } from './target.ts';

export const randomCidr = () =>
  `10.${Math.floor(Math.random() * 200) + 20}.${Math.floor(Math.random() * 250)}.0/24`;

/** Deletes in reverse order of creation, ignoring what is already gone. */
export class Cleanup {
  private readonly steps: (() => Promise<unknown>)[] = [];
  add(step: () => Promise<unknown>) {
    this.steps.push(step);
  }
  async run() {
    for (const step of this.steps.reverse()) await step().catch(() => undefined);
  }
}

export async function network(s: Session, cleanup: Cleanup, cidr = randomCidr()) {
  const net = await s.request('network', 'POST', '/v2.0/networks', {
    network: { name: unique('contract-net') },
  });
  assert.equal(net.status, 201, JSON.stringify(net.body));
  cleanup.add(() => s.request('network', 'DELETE', `/v2.0/networks/${net.body.network.id}`));
  const subnet = await s.request('network', 'POST', '/v2.0/subnets', {
    subnet: { network_id: net.body.network.id, cidr, ip_version: 4, name: unique('contract-subnet') },
  });
  assert.equal(subnet.status, 201, JSON.stringify(subnet.body));
  return { network: net.body.network, subnet: subnet.body.subnet };
}
