/**
 * Whether an applied workload has rolled out, read from the status its controller writes (as
 * `kubectl rollout status` reads it). A Deployment is done when its controller saw the latest
 * generation and every replica is updated and available; one past its progress deadline has
 * failed. A DaemonSet is judged on updated pods only, not unavailable ones: nodes rebooting for a
 * machine-config update make those come and go (upstream's rule, so the operator does not flap).
 */
import type { V1DaemonSet, V1Deployment } from '@kubernetes/client-node';
import type { KubernetesObject } from '../../kube/index.ts';
import { describeObject } from './kinds.ts';

export type Rollout = { state: 'done' } | { state: 'progressing' | 'failed'; message: string };

export function rolloutOf(obj: KubernetesObject): Rollout | undefined {
  if (obj.apiVersion !== 'apps/v1') return undefined;
  if (obj.kind === 'Deployment') return deploymentRollout(obj);
  if (obj.kind === 'DaemonSet') return daemonSetRollout(obj);
  return undefined;
}

function observed(obj: V1Deployment | V1DaemonSet): Rollout | undefined {
  const generation = obj.metadata?.generation ?? 0;
  const seen = obj.status?.observedGeneration ?? 0;
  return seen < generation
    ? { state: 'progressing', message: `${describeObject(obj)}: generation ${generation} not observed yet` }
    : undefined;
}

function deploymentRollout(d: V1Deployment): Rollout {
  const pending = observed(d);
  if (pending) return pending;
  const name = describeObject(d);
  const progressing = d.status?.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    return {
      state: 'failed',
      message: `${name} has exceeded its progress deadline: ${progressing.message ?? ''}`.trim(),
    };
  }
  const want = d.spec?.replicas ?? 1;
  const s = d.status ?? {};
  const updated = s.updatedReplicas ?? 0;
  if (updated < want)
    return { state: 'progressing', message: `${name}: ${updated} of ${want} replicas updated` };
  if ((s.replicas ?? 0) > updated) {
    return {
      state: 'progressing',
      message: `${name}: ${(s.replicas ?? 0) - updated} old replicas pending termination`,
    };
  }
  if ((s.availableReplicas ?? 0) < updated) {
    return {
      state: 'progressing',
      message: `${name}: ${s.availableReplicas ?? 0} of ${updated} updated replicas available`,
    };
  }
  return { state: 'done' };
}

function daemonSetRollout(ds: V1DaemonSet): Rollout {
  const pending = observed(ds);
  if (pending) return pending;
  const s = ds.status;
  const want = s?.desiredNumberScheduled ?? 0;
  const updated = s?.updatedNumberScheduled ?? 0;
  if (updated < want) {
    return { state: 'progressing', message: `${describeObject(ds)}: ${updated} of ${want} pods updated` };
  }
  return { state: 'done' };
}
