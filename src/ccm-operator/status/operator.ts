/**
 * The operator's own ClusterOperator conditions (upstream CCCMO `status.go`), as a pure function
 * of what the operands controller found: Available, Progressing, Degraded and Upgradeable with
 * upstream's reasons and messages, the `operator` version once available, and
 * CloudControllerOwner while the in-tree handshake matters. Where upstream leaves a condition as
 * it was (Degraded leaves Available and Progressing alone), the current one is carried over.
 */
import {
  Conditions,
  OPERATOR_VERSION,
  Reasons,
  type ClusterOperator,
  type OperandVersion,
} from '../api/index.ts';
import { findCondition, type WantedCondition } from './conditions.ts';

/** What the operands controller found. */
export type OperandsOutcome =
  /** Nothing to deploy (no Infrastructure, a platform without a CCM, or the in-tree side owns the loops). */
  | { state: 'idle'; why: string; cloudLoops?: 'in-tree' | undefined }
  /** The sub-controllers have not synced yet. */
  | { state: 'waiting'; why: string }
  /** Applied; `rollout` lists what has not rolled out yet. */
  | { state: 'deployed'; changed: boolean; rollout: readonly string[] }
  /** Something the operator cannot get past: a sub-controller degraded, a problem to fix, or failures past the threshold. */
  | { state: 'degraded'; why: string };

export interface OperatorStatus {
  conditions: WantedCondition[];
  versions: OperandVersion[] | undefined;
}

export function operatorStatus(
  outcome: OperandsOutcome,
  current: ClusterOperator | undefined,
  releaseVersion: string,
): OperatorStatus {
  const desired: OperandVersion[] = [{ name: OPERATOR_VERSION, version: releaseVersion }];
  const versions = current?.status?.versions;
  const atRelease =
    versions?.some((v) => v.name === OPERATOR_VERSION && v.version === releaseVersion) === true;
  const target = `${OPERATOR_VERSION}: ${releaseVersion}`;
  const keep = (type: string, fallback: WantedCondition): WantedCondition => {
    const c = findCondition(current?.status?.conditions, type);
    return c ? { type, status: c.status, reason: c.reason ?? '', message: c.message ?? '' } : fallback;
  };
  const owner = keep(Conditions.CloudControllerOwner, {
    type: Conditions.CloudControllerOwner,
    status: 'Unknown',
    reason: Reasons.Initializing,
  });
  const available = (message: string): WantedCondition => ({
    type: Conditions.Available,
    status: 'True',
    reason: Reasons.AsExpected,
    message,
  });
  const notDegraded: WantedCondition = {
    type: Conditions.Degraded,
    status: 'False',
    reason: Reasons.AsExpected,
  };
  const upgradeable: WantedCondition = {
    type: Conditions.Upgradeable,
    status: 'True',
    reason: Reasons.AsExpected,
  };
  const availableAt = `Cluster Cloud Controller Manager Operator is available at ${releaseVersion}`;

  switch (outcome.state) {
    case 'idle': {
      const conditions: WantedCondition[] = [
        available(`${availableAt}: nothing to deploy, ${outcome.why}`),
        { type: Conditions.Progressing, status: 'False', reason: Reasons.AsExpected },
        notDegraded,
        upgradeable,
      ];
      if (outcome.cloudLoops === 'in-tree') {
        conditions.push({
          type: Conditions.CloudControllerOwner,
          status: 'False',
          reason: Reasons.AsExpected,
          message: outcome.why,
        });
      }
      return { conditions, versions: desired };
    }
    case 'waiting':
      return {
        conditions: [
          keep(Conditions.Available, {
            type: Conditions.Available,
            status: 'False',
            reason: Reasons.Initializing,
            message: outcome.why,
          }),
          {
            type: Conditions.Progressing,
            status: 'True',
            reason: Reasons.Initializing,
            message: outcome.why,
          },
          notDegraded,
          upgradeable,
          ...(findCondition(current?.status?.conditions, Conditions.CloudControllerOwner) ? [owner] : []),
        ],
        versions: atRelease ? desired : versions,
      };
    case 'deployed': {
      const owns: WantedCondition = {
        type: Conditions.CloudControllerOwner,
        status: 'True',
        reason: Reasons.AsExpected,
        message: `Cluster Cloud Controller Manager Operator owns cloud controllers at ${releaseVersion}`,
      };
      if (outcome.rollout.length === 0 && !outcome.changed) {
        return {
          conditions: [
            available(availableAt),
            { type: Conditions.Progressing, status: 'False', reason: Reasons.AsExpected },
            notDegraded,
            upgradeable,
            owns,
          ],
          versions: desired,
        };
      }
      const message = atRelease
        ? outcome.rollout.join('; ') || 'operands updated'
        : `Progressing towards ${target}${outcome.rollout.length > 0 ? `: ${outcome.rollout.join('; ')}` : ''}`;
      return {
        conditions: [
          keep(Conditions.Available, {
            type: Conditions.Available,
            status: 'False',
            reason: Reasons.Initializing,
            message: 'the cloud controller manager is rolling out',
          }),
          {
            type: Conditions.Progressing,
            status: 'True',
            reason: atRelease ? Reasons.AsExpected : Reasons.SyncingResources,
            message,
          },
          notDegraded,
          upgradeable,
          owns,
        ],
        versions: atRelease ? desired : versions,
      };
    }
    case 'degraded': {
      const message = atRelease
        ? `Failed to resync for ${target} because ${outcome.why}`
        : `Failed when progressing towards ${target} because ${outcome.why}`;
      return {
        conditions: [
          keep(Conditions.Available, {
            type: Conditions.Available,
            status: 'False',
            reason: Reasons.SyncingFailed,
            message,
          }),
          keep(Conditions.Progressing, {
            type: Conditions.Progressing,
            status: 'False',
            reason: Reasons.SyncingFailed,
            message,
          }),
          { type: Conditions.Degraded, status: 'True', reason: Reasons.SyncingFailed, message },
          { type: Conditions.Upgradeable, status: 'False', reason: Reasons.SyncingFailed, message },
          ...(findCondition(current?.status?.conditions, Conditions.CloudControllerOwner) ? [owner] : []),
        ],
        versions: atRelease ? desired : versions,
      };
    }
  }
}
