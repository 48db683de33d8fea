/**
 * A refusal of the cloud turned into what the user must fix: the annotation or cloud.conf key that
 * supplied the refused value, the value, what the cloud said, and how to find a good value. Octavia's
 * own text ("Validation failure: Invalid flavor_id.") names neither; the URL it came with is no help.
 */
import type {
  DesiredLoadBalancer,
  Failed,
  RefusedInput,
} from '../../../openstack/services/loadbalancer/index.ts';
import type { LoadBalancerSpec } from '../../service/types.ts';

const WHAT: Readonly<Record<RefusedInput, string>> = {
  flavorId: 'flavor',
  availabilityZone: 'availability zone',
  provider: 'provider',
  'vip.subnetId': 'VIP subnet',
  'vip.networkId': 'VIP network',
  'vip.portId': 'VIP port',
  'vip.address': 'VIP address',
  'floatingIp.networkId': 'floating network',
  'floatingIp.subnet': 'floating subnet',
  'floatingIp.address': 'floating IP address',
};

const FIX: Readonly<Record<RefusedInput, string>> = {
  flavorId:
    'set it to the id of an enabled load-balancer flavor (openstack loadbalancer flavor list), or remove it',
  availabilityZone:
    'set it to an Octavia availability zone (openstack loadbalancer availabilityzone list), or remove it',
  provider: 'set it to an enabled provider (openstack loadbalancer provider list)',
  'vip.subnetId': 'set it to the id of an existing subnet (openstack subnet list)',
  'vip.networkId': 'set it to the id of an existing network (openstack network list)',
  'vip.portId': 'set it to the id of an existing, unused port (openstack port list)',
  'vip.address': 'set it to a free address of the VIP subnet, or remove it',
  'floatingIp.networkId': 'set it to the id of an external network (openstack network list --external)',
  'floatingIp.subnet':
    'set it to a subnet of the floating network (openstack subnet list --network <floating network>)',
  'floatingIp.address': 'set it to a free floating IP of the floating network, or remove it',
};

function valueOf(input: RefusedInput, desired: DesiredLoadBalancer): string | undefined {
  switch (input) {
    case 'flavorId':
      return desired.flavorId;
    case 'availabilityZone':
      return desired.availabilityZone;
    case 'provider':
      return desired.provider;
    case 'vip.subnetId':
      return desired.vip.subnetId;
    case 'vip.networkId':
      return desired.vip.networkId;
    case 'vip.portId':
      return desired.vip.portId;
    case 'vip.address':
      return desired.vip.address;
    case 'floatingIp.networkId':
      return desired.floatingIp?.networkId;
    case 'floatingIp.subnet': {
      const subnet = desired.floatingIp?.subnet;
      return subnet && 'id' in subnet ? subnet.id : undefined;
    }
    case 'floatingIp.address':
      return desired.floatingIp?.address;
  }
}

/**
 * `<origin>: <what> "<value>" was refused: <cloud message>. Fix: <fix>`, or undefined when the
 * refusal names no input of ours. A VIP subnet nobody configured was found from a member's port.
 */
export function refusalMessage(
  result: Pick<Failed, 'refused' | 'cloudMessage' | 'message'>,
  spec: LoadBalancerSpec,
  desired: DesiredLoadBalancer,
): string | undefined {
  const input = result.refused;
  if (!input) return undefined;
  const origin =
    spec.origins[input] ??
    (input === 'vip.subnetId' ? "the subnet of the first member node's port (autodetected)" : undefined);
  if (!origin) return undefined;
  const value = valueOf(input, desired);
  const shown = value === undefined ? '' : ` ${JSON.stringify(value)}`;
  const fix = origin.startsWith('the subnet')
    ? 'set [LoadBalancer] subnet-id or the annotation loadbalancer.openstack.org/subnet-id'
    : FIX[input];
  const said = (result.cloudMessage ?? result.message).trim();
  const sentence = /[.!?]$/.test(said) ? said : `${said}.`;
  return `${origin}: ${WHAT[input]}${shown} was refused: ${sentence} Fix: ${fix}`;
}
