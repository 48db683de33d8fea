/**
 * One controller's part of the ClusterOperator `cloud-controller-manager` status. Three
 * controllers report there (cloud config, trusted CA, operands); each applies its own conditions
 * server-side under its own field manager, so none overwrites another's and no write conflicts
 * (`status.conditions` is a map keyed by type). A controller always applies its whole set: a
 * condition it leaves out is removed, as server-side apply removes fields a manager stops
 * applying. Nothing is written when the set is already there.
 */
import type { Clock } from '../../lib/clock.ts';
import { isAlreadyExists, type CachedClient } from '../../kube/index.ts';
import {
  CLUSTER_OPERATOR_NAME,
  operatorKinds,
  type ClusterOperator,
  type OperandVersion,
  type RelatedObject,
} from '../api/index.ts';
import { conditionsFor, conditionsPresent, type WantedCondition } from './conditions.ts';
import { isDeepStrictEqual } from 'node:util';

export interface StatusReport {
  conditions: readonly WantedCondition[];
  /** Only the operands controller reports these. */
  versions?: readonly OperandVersion[];
  relatedObjects?: readonly RelatedObject[];
}

export interface ReporterOptions {
  client: CachedClient;
  /** The field manager of this controller's conditions. */
  fieldManager: string;
  clock: Clock;
}

export class ClusterOperatorReporter {
  private readonly opts: ReporterOptions;
  /** The condition types applied last (a type dropped from the set needs a write to go). */
  private applied: string | undefined;

  constructor(opts: ReporterOptions) {
    this.opts = opts;
  }

  /** The ClusterOperator, created when absent (on OpenShift the cluster version operator creates it). */
  async get(signal: AbortSignal): Promise<ClusterOperator> {
    const { client } = this.opts;
    const cached = await client.get(
      operatorKinds.ClusterOperator,
      { name: CLUSTER_OPERATOR_NAME },
      { signal },
    );
    if (cached) return cached;
    try {
      return await client.create(
        operatorKinds.ClusterOperator,
        {
          apiVersion: operatorKinds.ClusterOperator.apiVersion,
          kind: operatorKinds.ClusterOperator.kind,
          metadata: { name: CLUSTER_OPERATOR_NAME },
          spec: {},
        },
        { signal },
      );
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      return client.api.get(operatorKinds.ClusterOperator, { name: CLUSTER_OPERATOR_NAME }, { signal });
    }
  }

  async report(report: StatusReport, signal: AbortSignal): Promise<ClusterOperator> {
    const co = await this.get(signal);
    const conditions = conditionsFor(co.status?.conditions, report.conditions, this.opts.clock.now());
    const types = conditions.map((c) => c.type).join(',');
    const unchanged =
      this.applied === types &&
      conditionsPresent(co.status?.conditions, conditions) &&
      (report.versions === undefined || isDeepStrictEqual(co.status?.versions, report.versions)) &&
      (report.relatedObjects === undefined ||
        isDeepStrictEqual(co.status?.relatedObjects, report.relatedObjects));
    if (unchanged) return co;
    const written = await this.opts.client.api.patch(
      operatorKinds.ClusterOperator,
      { name: CLUSTER_OPERATOR_NAME },
      'apply',
      {
        apiVersion: operatorKinds.ClusterOperator.apiVersion,
        kind: operatorKinds.ClusterOperator.kind,
        metadata: { name: CLUSTER_OPERATOR_NAME },
        status: {
          conditions,
          ...(report.versions ? { versions: report.versions } : {}),
          ...(report.relatedObjects ? { relatedObjects: report.relatedObjects } : {}),
        },
      },
      { subresource: 'status', fieldManager: this.opts.fieldManager, force: true, signal },
    );
    this.applied = types;
    return written;
  }
}
