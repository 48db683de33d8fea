/** Small pieces every write handler uses: fault injection at create time and update stamps. */
import type { EmulatedCloud } from '../core/cloud.ts';
import { octaviaTime, type Provisioned } from './model.ts';

export interface CreateFaults {
  /** ERROR when an `error-on-create` fault for the resource was consumed. */
  final: 'ACTIVE' | 'ERROR';
  /** True when a `stuck` fault for the resource was consumed: the worker never finishes. */
  stuck: boolean;
}

/** Consumes the state faults aimed at the next create of `resource` (loadbalancer, listener, pool...). */
export function takeCreateFaults(cloud: EmulatedCloud, resource: string): CreateFaults {
  const error = cloud.faults.take('error-on-create', 'octavia', resource);
  const stuck = cloud.faults.take('stuck', 'octavia', resource);
  return { final: error ? 'ERROR' : 'ACTIVE', stuck };
}

export function stampUpdate(record: Provisioned): void {
  record.updated_at = octaviaTime();
}
