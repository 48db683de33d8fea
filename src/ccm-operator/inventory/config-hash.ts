/**
 * A CCM reads its cloud config and trust bundle once, at start: a change to cloud-conf or
 * ccm-trusted-ca must roll its pods (as upstream's operator does with a config hash on the pod
 * template). The hash covers the data of every ConfigMap a workload's pods mount or read through
 * `envFrom`/`valueFrom`, of those the operator syncs; a workload mounting none is left as rendered.
 */
import { createHash } from 'node:crypto';
import type { V1ConfigMap, V1PodSpec } from '@kubernetes/client-node';
import type { KubernetesObject } from '../../kube/index.ts';

/** The pod template annotation carrying the hash. */
export const CONFIG_HASH_ANNOTATION = 'ccm-operator.shiftstack.io/config-hash';

/** The names of the ConfigMaps a pod spec uses. */
export function configMapsUsed(spec: V1PodSpec | undefined): Set<string> {
  const names = new Set<string>();
  for (const v of spec?.volumes ?? []) {
    if (v.configMap?.name) names.add(v.configMap.name);
    for (const s of v.projected?.sources ?? []) if (s.configMap?.name) names.add(s.configMap.name);
  }
  for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) {
    for (const e of c.envFrom ?? []) if (e.configMapRef?.name) names.add(e.configMapRef.name);
    for (const e of c.env ?? [])
      if (e.valueFrom?.configMapKeyRef?.name) names.add(e.valueFrom.configMapKeyRef.name);
  }
  return names;
}

/**
 * A copy of a Deployment or DaemonSet with the hash of the synced ConfigMaps its pods use (those
 * in `synced`, by name, from the workload's namespace), or the object itself when it uses none.
 */
export function withConfigHash<T extends KubernetesObject>(
  obj: T,
  synced: ReadonlyMap<string, V1ConfigMap>,
): T {
  if (obj.apiVersion !== 'apps/v1' || (obj.kind !== 'Deployment' && obj.kind !== 'DaemonSet')) return obj;
  const template = (
    obj as { spec?: { template?: { metadata?: KubernetesObject['metadata']; spec?: V1PodSpec } } }
  ).spec?.template;
  const used = [...configMapsUsed(template?.spec)].filter((n) => synced.has(n)).sort();
  if (used.length === 0) return obj;
  const hash = createHash('sha256');
  for (const name of used) {
    const cm = synced.get(name)!;
    hash.update(JSON.stringify([name, sorted(cm.data), sorted(cm.binaryData)]));
  }
  const copy = structuredClone(obj) as T & {
    spec: { template: { metadata?: KubernetesObject['metadata'] } };
  };
  const meta = copy.spec.template.metadata ?? {};
  copy.spec.template.metadata = {
    ...meta,
    annotations: { ...meta.annotations, [CONFIG_HASH_ANNOTATION]: hash.digest('hex') },
  };
  return copy;
}

function sorted(data: Record<string, string> | undefined): [string, string][] {
  return Object.entries(data ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
