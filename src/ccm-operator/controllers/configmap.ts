/**
 * The ConfigMaps the sync controllers own whole (cloud-conf, ccm-trusted-ca): their data is
 * exactly what the controller computed, keys it no longer writes included, so they are replaced
 * (create, or update at the cached resourceVersion) rather than applied field by field. Nothing is
 * written when the data is already right.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import { clone, kinds, type Manager } from '../../kube/index.ts';

export interface WantedConfigMap {
  namespace: string;
  name: string;
  data: Record<string, string>;
  binaryData?: Record<string, string> | undefined;
}

export type ConfigMapWrite = 'created' | 'updated' | 'unchanged';

export async function syncConfigMap(
  mgr: Manager,
  wanted: WantedConfigMap,
  fieldManager: string,
  signal: AbortSignal,
): Promise<ConfigMapWrite> {
  const key = { namespace: wanted.namespace, name: wanted.name };
  const current = await mgr.client.get(kinds.ConfigMap, key, {
    signal,
    informer: { namespace: wanted.namespace },
  });
  const binaryData =
    wanted.binaryData && Object.keys(wanted.binaryData).length > 0 ? wanted.binaryData : undefined;
  if (!current) {
    await mgr.api.create(
      kinds.ConfigMap,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: key,
        data: wanted.data,
        ...(binaryData ? { binaryData } : {}),
      },
      { fieldManager, signal },
    );
    return 'created';
  }
  if (
    isDeepStrictEqual(current.data ?? {}, wanted.data) &&
    isDeepStrictEqual(current.binaryData, binaryData)
  ) {
    return 'unchanged';
  }
  const next: V1ConfigMap = clone(current);
  next.data = wanted.data;
  if (binaryData) next.binaryData = binaryData;
  else delete next.binaryData;
  await mgr.api.update(kinds.ConfigMap, next, { fieldManager, signal });
  return 'updated';
}
