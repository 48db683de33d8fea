/**
 * A Deployment's status as the Deployment controller writes it (`sync.go` `calculateStatus`,
 * `progress.go` `syncRolloutStatus`, `util/deployment_util.go`), pure: from what its ReplicaSets
 * hold and the status it had.
 *
 * - replicas, updatedReplicas, readyReplicas, availableReplicas: pods that are not being
 *   stopped, of every ReplicaSet or of the current one; unavailableReplicas: the ReplicaSets'
 *   desired total minus the available, never below 0.
 * - Available: True (MinimumReplicasAvailable) once `replicas - maxUnavailable` pods are available,
 *   else False (MinimumReplicasUnavailable).
 * - Progressing: NewReplicaSetCreated when a template change makes a ReplicaSet, ReplicaSetUpdated
 *   while pods are updated, become ready or available, or old ones go; NewReplicaSetAvailable once
 *   every replica is updated and available; ProgressDeadlineExceeded (False) when nothing moved
 *   for `progressDeadlineSeconds`. A condition's lastTransitionTime moves only when its status does.
 */
import type { V1Deployment, V1DeploymentCondition, V1DeploymentStatus } from '@kubernetes/client-node';
import { metaTime } from '../../kube/index.ts';
import { maxUnavailable, type Strategy } from './rollout.ts';

export interface ReplicaSetCounts {
  name: string;
  desired: number;
  /** Pods not being stopped. */
  active: number;
  ready: number;
  available: number;
}

export interface StatusInput {
  deployment: V1Deployment;
  strategy: Strategy;
  current: ReplicaSetCounts;
  old: readonly ReplicaSetCounts[];
  /** The current ReplicaSet was made by this sync (a new template). */
  created: boolean;
  nowMs: number;
}

type Cond = V1DeploymentCondition;

export function deploymentStatus(input: StatusInput): V1DeploymentStatus {
  const d = input.deployment;
  const replicas = d.spec?.replicas ?? 1;
  const all = [input.current, ...input.old];
  const total = (f: (s: ReplicaSetCounts) => number) => all.reduce((n, s) => n + f(s), 0);
  const available = total((s) => s.available);
  const prev = d.status ?? {};
  const status: V1DeploymentStatus = {
    observedGeneration: d.metadata?.generation ?? 0,
    replicas: total((s) => s.active),
    updatedReplicas: input.current.active,
    readyReplicas: total((s) => s.ready),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total((s) => s.desired) - available),
    ...(prev.collisionCount !== undefined ? { collisionCount: prev.collisionCount } : {}),
    conditions: (prev.conditions ?? []).map((c) => ({ ...c })),
  };
  const now = metaTime(input.nowMs);
  const conds = status.conditions!;

  if (available >= replicas - maxUnavailable(input.strategy, replicas)) {
    setCondition(
      conds,
      cond('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.', now),
    );
  } else {
    setCondition(
      conds,
      cond(
        'Available',
        'False',
        'MinimumReplicasUnavailable',
        'Deployment does not have minimum availability.',
        now,
      ),
    );
  }

  const rs = input.current.name;
  const deadline = d.spec?.progressDeadlineSeconds;
  if (deadline === undefined) {
    removeCondition(conds, 'Progressing');
    return status;
  }
  if (input.created) {
    setCondition(
      conds,
      cond('Progressing', 'True', 'NewReplicaSetCreated', `Created new replica set "${rs}"`, now),
    );
  }
  const current = conds.find((c) => c.type === 'Progressing');
  const complete = status.replicas === status.updatedReplicas && current?.reason === 'NewReplicaSetAvailable';
  if (complete) return status;
  if (
    status.updatedReplicas === replicas &&
    status.replicas === replicas &&
    available === replicas &&
    (status.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0)
  ) {
    setCondition(
      conds,
      cond(
        'Progressing',
        'True',
        'NewReplicaSetAvailable',
        `ReplicaSet "${rs}" has successfully progressed.`,
        now,
      ),
    );
  } else if (progressed(prev, status)) {
    const next = cond('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rs}" is progressing.`, now);
    if (current?.status === 'True') next.lastTransitionTime = current.lastTransitionTime;
    removeCondition(conds, 'Progressing');
    conds.push(next);
  } else if (current && current.reason !== 'ProgressDeadlineExceeded') {
    const since = Date.parse(String(current.lastUpdateTime));
    if (Number.isFinite(since) && since + deadline * 1000 < input.nowMs) {
      setCondition(
        conds,
        cond(
          'Progressing',
          'False',
          'ProgressDeadlineExceeded',
          `ReplicaSet "${rs}" has timed out progressing.`,
          now,
        ),
      );
    }
  }
  return status;
}

/** `DeploymentProgressing`: more pods updated, ready or available, or fewer old ones. */
function progressed(old: V1DeploymentStatus, next: V1DeploymentStatus): boolean {
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (next.replicas ?? 0) - (next.updatedReplicas ?? 0);
  return (
    (next.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (next.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (next.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

function cond(type: string, status: string, reason: string, message: string, now: string): Cond {
  return {
    type,
    status,
    reason,
    message,
    lastUpdateTime: now as unknown as Date,
    lastTransitionTime: now as unknown as Date,
  };
}

/** `SetDeploymentCondition`: same status and reason is no change; same status keeps the transition time. */
function setCondition(conds: Cond[], next: Cond): void {
  const i = conds.findIndex((c) => c.type === next.type);
  const current = conds[i];
  if (current && current.status === next.status && current.reason === next.reason) return;
  if (current && current.status === next.status) next.lastTransitionTime = current.lastTransitionTime;
  if (i >= 0) conds.splice(i, 1);
  conds.push(next);
}

function removeCondition(conds: Cond[], type: string): void {
  const i = conds.findIndex((c) => c.type === type);
  if (i >= 0) conds.splice(i, 1);
}
