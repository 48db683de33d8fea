/**
 * Which input of the desired state a refusal is about, when the cloud's answer tells: Octavia's
 * create answers "Validation failure: Invalid flavor_id." or "Subnet <id> not found." (400), Neutron's
 * floating IP create "Network <id> could not be found." (404). The caller knows where each input
 * came from (an annotation, a cloud.conf key) and can name that, with the fix, instead of the URL.
 */
import type { DesiredLoadBalancer, FloatingIpIntent, RefusedInput } from './types.ts';

/** The input of `desired` that Octavia's `said` names, if any. */
export function refusedLoadBalancerInput(
  said: string,
  desired: DesiredLoadBalancer,
): RefusedInput | undefined {
  const { vip } = desired;
  const names = (value: string | undefined) => value !== undefined && value !== '' && said.includes(value);
  if (desired.flavorId !== undefined && /flavor/i.test(said)) return 'flavorId';
  if (desired.availabilityZone !== undefined && /availability[ _]zone/i.test(said)) return 'availabilityZone';
  if (names(vip.portId)) return 'vip.portId';
  if (names(vip.subnetId)) return 'vip.subnetId';
  if (names(vip.networkId)) return 'vip.networkId';
  if (names(vip.address)) return 'vip.address';
  if (desired.provider !== undefined && /provider/i.test(said)) return 'provider';
  return undefined;
}

/** The input of the floating IP intent that Neutron's `said` names, if any. */
export function refusedFloatingIpInput(said: string, intent: FloatingIpIntent): RefusedInput | undefined {
  const subnet = intent.subnet;
  if (subnet && 'id' in subnet && said.includes(subnet.id)) return 'floatingIp.subnet';
  if (intent.networkId !== undefined && said.includes(intent.networkId)) return 'floatingIp.networkId';
  if (intent.address !== undefined && said.includes(intent.address)) return 'floatingIp.address';
  return undefined;
}
