/**
 * The leader lock on a coordination.k8s.io/v1 Lease (client-go's `resourcelock.LeaseLock`): the
 * election record is the Lease spec; writes are PUTs with the resourceVersion read, so of two
 * candidates racing for an expired lease exactly one wins and the other gets 409 Conflict.
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { KubeClient } from '../client.ts';
import { isNotFound } from '../errors.ts';
import { kinds } from '../resource.ts';

export interface LeaderElectionRecord {
  /** Empty when released. */
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** metav1.MicroTime. */
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

export interface ObservedLease {
  record: LeaderElectionRecord;
  resourceVersion: string;
}

export class LeaseLock {
  readonly namespace: string;
  readonly name: string;
  private readonly client: KubeClient;

  constructor(client: KubeClient, namespace: string, name: string) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
  }

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** The current record, or undefined when the Lease does not exist. */
  async get(signal?: AbortSignal): Promise<ObservedLease | undefined> {
    let lease: V1Lease;
    try {
      lease = await this.client.get(kinds.Lease, { namespace: this.namespace, name: this.name }, { signal });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    // Times stay strings on the wire: client-node's model types say Date, the JSON says otherwise.
    const spec = (lease.spec ?? {}) as Record<string, unknown>;
    return {
      record: {
        holderIdentity: typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '',
        leaseDurationSeconds: typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds : 0,
        acquireTime: typeof spec.acquireTime === 'string' ? spec.acquireTime : '',
        renewTime: typeof spec.renewTime === 'string' ? spec.renewTime : '',
        leaseTransitions: typeof spec.leaseTransitions === 'number' ? spec.leaseTransitions : 0,
      },
      resourceVersion: lease.metadata?.resourceVersion ?? '',
    };
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<ObservedLease> {
    const lease = await this.client.create(
      kinds.Lease,
      { metadata: { namespace: this.namespace, name: this.name }, spec: toSpec(record) },
      { signal },
    );
    return { record, resourceVersion: lease.metadata?.resourceVersion ?? '' };
  }

  /** Replaces the record if the Lease is still at `resourceVersion` (409 Conflict otherwise). */
  async update(
    record: LeaderElectionRecord,
    resourceVersion: string,
    signal?: AbortSignal,
  ): Promise<ObservedLease> {
    const lease = await this.client.update(
      kinds.Lease,
      {
        metadata: { namespace: this.namespace, name: this.name, resourceVersion },
        spec: toSpec(record),
      },
      { signal },
    );
    return { record, resourceVersion: lease.metadata?.resourceVersion ?? '' };
  }
}

function toSpec(r: LeaderElectionRecord): V1Lease['spec'] {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: r.acquireTime,
    renewTime: r.renewTime,
    leaseTransitions: r.leaseTransitions,
  } as unknown as V1Lease['spec'];
}
