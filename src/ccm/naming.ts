/**
 * The names, descriptions and tags OCCM gives the OpenStack objects of a Service, and their parsing
 * back. Existing load balancers are found and adopted by these exact strings, and floating IPs are
 * only ever deleted when their description carries OCCM's marker, so each one is spelled as in
 * cloud-provider-openstack (`pkg/openstack/loadbalancer.go`, `loadbalancer_sg.go`,
 * `loadbalancer_rename.go`) and k8s.io/cloud-provider (`DefaultLoadBalancerName`).
 */

export const SERVICE_PREFIX = 'kube_service_';
export const LISTENER_PREFIX = 'listener_';
export const POOL_PREFIX = 'pool_';
export const MONITOR_PREFIX = 'monitor_';

/** What deleteFIPIfCreatedByProvider looks for (an unanchored match) before deleting a floating IP. */
export const FLOATING_IP_MARKER = 'Floating IP for Kubernetes external service';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * OCCM's CutString255: at most 255 bytes, cut wherever byte 255 falls. A character cut in half is
 * sent as one U+FFFD per leftover byte, which is what Go's JSON encoder makes of invalid UTF-8.
 */
export function cut255(text: string): string {
  const bytes = encoder.encode(text);
  if (bytes.length <= 255) return text;
  const cut = bytes.subarray(0, 255);
  let start = cut.length;
  // Step back over continuation bytes to the lead byte of the last character.
  while (start > 0 && (cut[start - 1]! & 0xc0) === 0x80) start--;
  const lead = start > 0 ? cut[start - 1]! : 0;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  const complete = start > 0 && cut.length - (start - 1) >= need;
  if (complete || lead < 0x80) return decoder.decode(cut);
  const partial = cut.length - (start - 1);
  return decoder.decode(cut.subarray(0, start - 1)) + '\uFFFD'.repeat(partial);
}

/** `kube_service_<cluster>_<namespace>_<name>`, at most 255 bytes. */
export function loadBalancerName(clusterName: string, namespace: string, name: string): string {
  return cut255(`${SERVICE_PREFIX}${clusterName}_${namespace}_${name}`);
}

/** The in-tree provider's name: `a` + the Service UID without dashes, cut to 32 bytes (AWS's limit, kept by all). */
export function legacyLoadBalancerName(uid: string): string {
  return `a${uid}`.replaceAll('-', '').slice(0, 32);
}

/** Whether a name is one legacyLoadBalancerName gives (a UID is hex: `a` and 31 hex digits). */
export function isLegacyLoadBalancerName(name: string): boolean {
  return /^a[0-9a-f]{31}$/.test(name);
}

export function listenerName(portIndex: number, lbName: string): string {
  return cut255(`${LISTENER_PREFIX}${portIndex}_${lbName}`);
}

export function poolName(portIndex: number, lbName: string): string {
  return cut255(`${POOL_PREFIX}${portIndex}_${lbName}`);
}

export function monitorName(portIndex: number, lbName: string): string {
  return cut255(`${MONITOR_PREFIX}${portIndex}_${lbName}`);
}

/** Members of a batch update are named after their node. */
export function memberName(nodeName: string): string {
  return nodeName;
}

/** Members created one by one (provider-requires-serial-api-calls). */
export function serialMemberName(nodeName: string, address: string, nodePort: number): string {
  return cut255(`member_${nodeName}_${address}_${nodePort}`);
}

export function loadBalancerDescription(namespace: string, name: string, clusterName: string): string {
  return `Kubernetes external service ${namespace}/${name} from cluster ${clusterName}`;
}

export function floatingIpDescription(namespace: string, name: string, clusterName: string): string {
  return `${FLOATING_IP_MARKER} ${namespace}/${name} from cluster ${clusterName}`;
}

/** True when OCCM (or we) created the floating IP, so deleting it cannot remove a user's address. */
export function isFloatingIpCreatedByCcm(description: string | null | undefined): boolean {
  return (description ?? '').includes(FLOATING_IP_MARKER);
}

/** `lb-sg-<uid>-<namespace>-<name>`, at most 255 bytes. */
export function securityGroupName(uid: string, namespace: string, name: string): string {
  return cut255(`lb-sg-${uid}-${namespace}-${name}`);
}

export function securityGroupDescription(namespace: string, name: string, clusterName: string): string {
  return `Security Group for ${namespace}/${name} Service LoadBalancer in cluster ${clusterName}`;
}

/** A load balancer OCCM created (so one it may delete): its name has OCCM's prefix. */
export function isCreatedByCcm(lbName: string): boolean {
  return lbName.startsWith(SERVICE_PREFIX);
}

/**
 * The Services recorded on a shared load balancer: one `kube_service_…` tag per Service (Octavia API
 * 2.5 tags). Other tags are the user's and are left alone.
 */
export function serviceTags(tags: readonly string[]): string[] {
  return tags.filter((t) => t.startsWith(SERVICE_PREFIX));
}

/**
 * OCCM's admission of a Service to a load balancer it does not own: it may join when already tagged,
 * or when the Services already there plus this one stay within `max-shared-lb`.
 */
export function mayShare(lbTags: readonly string[], serviceLbName: string, maxSharedLb: number): boolean {
  return lbTags.includes(serviceLbName) || serviceTags(lbTags).length + 1 <= maxSharedLb;
}

/**
 * OCCM's needDeleteLB: delete the load balancer itself only when OCCM created it and no other
 * Service's tag remains on it; otherwise only this Service's listeners go.
 */
export function shouldDeleteLoadBalancer(
  lb: { name: string; tags: readonly string[] },
  serviceLbName: string,
  tagsSupported: boolean,
): boolean {
  const others = tagsSupported ? serviceTags(lb.tags).filter((t) => t !== serviceLbName) : [];
  return isCreatedByCcm(lb.name) && others.length === 0;
}

export interface ParsedLoadBalancerName {
  clusterName: string;
  namespace: string;
  /** Absent when the 255-byte cut reached into the namespace. */
  name?: string;
  /** The name is 255 bytes long, so its end may have been cut. */
  mayBeCut: boolean;
}

/**
 * Splits `kube_service_<cluster>_<namespace>_<name>`. Namespaces and Service names cannot contain
 * `_`, so the last two parts are theirs and the rest is the cluster name, which may contain `_`.
 * This mirrors OCCM's getClusterName regexp (`kube_service_(.+?)_[^_]+(_[^_]+)?$`), including the
 * case of a name cut short. Compare with loadBalancerName() to be sure a load balancer is a Service's.
 */
export function parseLoadBalancerName(
  lbName: string,
  resourcePrefix = '',
): ParsedLoadBalancerName | undefined {
  const prefix = `${resourcePrefix}${SERVICE_PREFIX}`;
  if (!lbName.startsWith(prefix)) return undefined;
  const parts = lbName.slice(prefix.length).split('_');
  const mayBeCut = encoder.encode(lbName).length === 255;
  if (parts.length >= 3) {
    return {
      clusterName: parts.slice(0, -2).join('_'),
      namespace: parts[parts.length - 2]!,
      name: parts[parts.length - 1]!,
      mayBeCut,
    };
  }
  if (parts.length === 2 && parts[0] !== '' && parts[1] !== '') {
    return { clusterName: parts[0]!, namespace: parts[1]!, mayBeCut };
  }
  return undefined;
}

/** The cluster name inside an object's name (`listener_0_kube_service_…` with its prefix), as getClusterName. */
export function clusterNameOf(objectName: string): string | undefined {
  const m = /^(?:listener_|pool_|monitor_)\d+_/.exec(objectName);
  return parseLoadBalancerName(objectName.slice(m ? m[0].length : 0))?.clusterName;
}

/** lbHasOldClusterName: an OCCM load balancer whose name carries another cluster name (PR #2552 renames it). */
export function hasOldClusterName(lbName: string, clusterName: string): boolean {
  return isCreatedByCcm(lbName) && parseLoadBalancerName(lbName)?.clusterName !== clusterName;
}

/** replaceClusterName: the first occurrence of the old cluster name after the prefix, cut to 255 bytes. */
export function replaceClusterName(oldClusterName: string, clusterName: string, objectName: string): string {
  const found = objectName.startsWith(SERVICE_PREFIX);
  const rest = found ? objectName.slice(SERVICE_PREFIX.length) : objectName;
  const replaced = rest.replace(oldClusterName, () => clusterName);
  return cut255(found ? `${SERVICE_PREFIX}${replaced}` : replaced);
}
