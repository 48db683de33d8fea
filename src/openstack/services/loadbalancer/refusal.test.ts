import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refusedFloatingIpInput, refusedLoadBalancerInput } from './refusal.ts';
import type { DesiredLoadBalancer } from './types.ts';

const SUBNET = '5f0e5a8e-0c39-4d0e-9d4c-2a7c0e3c1a11';
const NETWORK = '7e3c1b0a-1111-4a4a-8b8b-123456789abc';
const desired: DesiredLoadBalancer = {
  identity: { name: 'kube_service_c_ns_web', description: '' },
  vip: { subnetId: SUBNET },
  flavorId: 'f0000000-0000-4000-8000-000000000000',
  availabilityZone: 'az1',
  listeners: [],
  floatingIp: { external: true, networkId: NETWORK, description: '', ownedMarker: 'x' },
};

describe('refused inputs', () => {
  it("names the input Octavia's create refusal is about", () => {
    assert.equal(refusedLoadBalancerInput('Validation failure: Invalid flavor_id.', desired), 'flavorId');
    assert.equal(
      refusedLoadBalancerInput(
        `The selected flavor is not allowed in this deployment: ${desired.flavorId}`,
        desired,
      ),
      'flavorId',
    );
    assert.equal(
      refusedLoadBalancerInput('Validation failure: Invalid availability zone.', desired),
      'availabilityZone',
    );
    assert.equal(refusedLoadBalancerInput(`Subnet ${SUBNET} not found.`, desired), 'vip.subnetId');
    assert.equal(
      refusedLoadBalancerInput('Validation failure: Pool names must be unique.', desired),
      undefined,
    );
    const noFlavor = { ...desired, flavorId: undefined };
    assert.equal(refusedLoadBalancerInput('Validation failure: Invalid flavor_id.', noFlavor), undefined);
  });

  it("names the floating IP input Neutron's refusal is about", () => {
    const intent = desired.floatingIp!;
    assert.equal(
      refusedFloatingIpInput(`Network ${NETWORK} could not be found.`, intent),
      'floatingIp.networkId',
    );
    assert.equal(
      refusedFloatingIpInput(`Subnet ${SUBNET} could not be found.`, { ...intent, subnet: { id: SUBNET } }),
      'floatingIp.subnet',
    );
    assert.equal(refusedFloatingIpInput('Quota exceeded for resources: floatingip.', intent), undefined);
  });
});
