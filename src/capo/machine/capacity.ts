/**
 * What a machine made from an OpenStackMachineTemplate offers, for the cluster autoscaler's
 * scale-from-zero (`status.capacity`, CAPO's openstackmachinetemplate controller): the flavor's
 * vCPUs (`cpu`), RAM (`memory`), ephemeral disk (`ephemeral-storage`), and the root disk
 * (`storage`: the root volume when booting from one, else the flavor's disk). Quantities are
 * written as Kubernetes writes them (binary suffixes, the largest that divides exactly).
 */
import type { Flavor } from '../../openstack/compute/v2/flavors.ts';
import type { OpenStackMachineSpec } from '../api/index.ts';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const BINARY = ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'] as const;

/** A byte count as a canonical BinarySI quantity: 4294967296 → `4Gi`, 1610612736 → `1536Mi`. */
export function binaryQuantity(bytes: number): string {
  for (const [i, suffix] of BINARY.entries()) {
    const unit = 1024 ** (BINARY.length - i);
    if (bytes >= unit && bytes % unit === 0) return `${bytes / unit}${suffix}`;
  }
  return String(bytes);
}

export function templateCapacity(
  flavor: Pick<Flavor, 'vcpus' | 'ram' | 'disk' | 'OS-FLV-EXT-DATA:ephemeral'>,
  spec: Pick<OpenStackMachineSpec, 'rootVolume'>,
): Record<string, string> {
  const capacity: Record<string, string> = {};
  if (flavor.vcpus > 0) capacity.cpu = String(flavor.vcpus);
  if (flavor.ram > 0) capacity.memory = binaryQuantity(flavor.ram * MiB);
  const ephemeral = flavor['OS-FLV-EXT-DATA:ephemeral'] ?? 0;
  if (ephemeral > 0) capacity['ephemeral-storage'] = binaryQuantity(ephemeral * GiB);
  const root = spec.rootVolume?.sizeGiB ?? 0;
  if (root > 0) capacity.storage = binaryQuantity(root * GiB);
  else if (flavor.disk > 0) capacity.storage = binaryQuantity(flavor.disk * GiB);
  return capacity;
}
