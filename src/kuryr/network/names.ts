/**
 * Names of a namespace's Neutron network and subnet, as upstream's `get_resource_name(ns, uid)`:
 * `<namespace uid>/<namespace name>`, cut to Neutron's 255 characters. The uid makes the name
 * unique to this namespace's life, so a crash between a create and the status write finds the
 * object again by name, and a namespace recreated under the same name never adopts the old one.
 */
const NEUTRON_NAME_MAX = 255;

export interface NamespaceRef {
  name: string;
  uid: string;
}

export function namespaceResourceName(ns: NamespaceRef): string {
  const prefix = `${ns.uid}/`;
  return `${prefix}${ns.name}`.slice(0, NEUTRON_NAME_MAX);
}

/** Whether a Neutron object's name says it was made for this namespace (by uid). */
export function isNamespaceResource(name: string, ns: NamespaceRef): boolean {
  return name === namespaceResourceName(ns);
}

/** The description we give both objects: who they are for, for a human reading the cloud. */
export function namespaceResourceDescription(ns: NamespaceRef): string {
  return `kuryr: network of Kubernetes namespace ${ns.name}`;
}
