/**
 * The labels the cloud-node controller puts on a Node from its server, as OCCM's InstanceMetadata
 * derives them: the instance type (node.kubernetes.io/instance-type), the zone
 * (topology.kubernetes.io/zone), the region, and OCCM's extra topology.openstack.org/host-id.
 */
import type { EmbeddedFlavor, Server } from '../openstack/compute/v2/servers.ts';

export const LABEL_INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
export const LABEL_REGION = 'topology.kubernetes.io/region';
export const LABEL_HOST_ID = 'topology.openstack.org/host-id';

/** Kubernetes' IsValidLabelValue: empty, or ≤ 63 characters, alphanumeric at both ends, `-_.` inside. */
export function isValidLabelValue(value: string): boolean {
  return value.length <= 63 && /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(value);
}

/**
 * OCCM's util.SanitizeLabel: runs of other characters become `-`, `-_.` are trimmed from both ends,
 * then the result is cut to 63 characters (without trimming again, as upstream).
 */
export function sanitizeLabel(value: string): string {
  const replaced = value.replace(/[^-a-zA-Z0-9_.]+/g, '-').replace(/^[-_.]+|[-_.]+$/g, '');
  return replaced.slice(0, 63);
}

/**
 * How to name the instance type, in OCCM's order: the embedded flavor's `original_name` when it is a
 * valid label value; otherwise a flavor lookup (`GET /flavors/{id}`) whose name, or id when the name
 * is not a valid label, is the type. OCCM looks up `original_name` as an id when it is not a valid
 * label (which usually fails), then the flavor `id` of older microversions; the steps are the same.
 */
export type InstanceTypeStep = { kind: 'label'; value: string } | { kind: 'lookup'; flavorId: string };

export function instanceTypeSteps(server: Pick<Server, 'flavor'>): InstanceTypeStep[] {
  const flavor = server.flavor as Partial<EmbeddedFlavor> & { id?: unknown };
  const steps: InstanceTypeStep[] = [];
  if (typeof flavor.original_name === 'string') {
    steps.push(
      isValidLabelValue(flavor.original_name)
        ? { kind: 'label', value: flavor.original_name }
        : { kind: 'lookup', flavorId: flavor.original_name },
    );
  }
  if (typeof flavor.id === 'string') steps.push({ kind: 'lookup', flavorId: flavor.id });
  return steps;
}

/** The instance type from a looked-up flavor: its name if a valid label value, else its id. */
export function instanceTypeOfFlavor(flavor: { id: string; name: string }): string {
  return isValidLabelValue(flavor.name) ? flavor.name : flavor.id;
}

/** The zone label: the server's availability zone, sanitized (a blank zone gives an empty label). */
export function zoneOf(server: Pick<Server, 'OS-EXT-AZ:availability_zone'>): string {
  return sanitizeLabel(server['OS-EXT-AZ:availability_zone'] ?? '');
}

/** OCCM's additional labels: the sanitized hostId, when there is one. */
export function additionalLabels(server: Pick<Server, 'hostId'>): Record<string, string> {
  const hostId = sanitizeLabel(server.hostId ?? '');
  return hostId === '' ? {} : { [LABEL_HOST_ID]: hostId };
}
