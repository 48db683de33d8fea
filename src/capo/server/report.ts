/**
 * One reconcile's status draft of an OpenStackServer and what it tells the user: conditions (CAPO's
 * types and reasons, with the generation they speak about), Warning Events and log lines for every
 * refusal or failure, written as one status patch — or at once, when the engine records what it
 * created before it goes on.
 *
 * An Event goes out when its condition changes (status, reason or message), not on every retry of
 * the same failure: `kubectl describe` shows what happened, not how often the queue looked.
 */
import type { Logger } from '../../lib/log.ts';
import {
  clone,
  patchStatus,
  setCondition,
  type Condition,
  type ConditionInput,
  type EventRecorder,
  type KubeClient,
} from '../../kube/index.ts';
import { capoKinds, type OpenStackServer, type OpenStackServerStatus } from '../api/index.ts';

export interface ConditionReport {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message?: string;
  /** A Warning Event (its reason) when the condition changes; `Normal:` prefix for a Normal one. */
  event?: string | undefined;
}

export class ServerReport {
  private stored: OpenStackServer;
  readonly draft: OpenStackServer;
  private readonly api: KubeClient;
  private readonly events: EventRecorder;
  private readonly log: Logger;

  constructor(obj: OpenStackServer, deps: { api: KubeClient; events: EventRecorder; log: Logger }) {
    this.stored = obj;
    this.draft = clone(obj);
    this.draft.status ??= {};
    this.api = deps.api;
    this.events = deps.events;
    this.log = deps.log;
  }

  get status(): OpenStackServerStatus {
    return (this.draft.status ??= {});
  }

  get object(): OpenStackServer {
    return this.stored;
  }

  /** The object as stored after another write of ours (a finalizer patch). */
  rebase(obj: OpenStackServer): void {
    this.stored = obj;
  }

  /** Sets a condition; on a change, the Event it asks for and a log line for anything not True. */
  condition(c: ConditionReport): boolean {
    const input: ConditionInput = {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message ?? '',
      observedGeneration: this.stored.metadata?.generation,
    };
    const list = (this.status.conditions ??= []) as Condition[];
    const changed = setCondition(list, input);
    if (changed && c.status !== 'True' && c.message) {
      this.log.info({ condition: c.type, reason: c.reason }, c.message);
    }
    if (changed && c.event) this.event(c.event, c.message ?? c.reason);
    return changed;
  }

  /** An Event now: Warning unless `reason` is written `Normal:<Reason>`. */
  event(reason: string, message: string): void {
    const normal = reason.startsWith('Normal:');
    const r = normal ? reason.slice('Normal:'.length) : reason;
    if (!normal) this.log.warn({ reason: r }, message);
    this.events.event(this.stored, normal ? 'Normal' : 'Warning', r, message);
  }

  /** Writes the status difference since the last write, if any. */
  async write(signal: AbortSignal): Promise<void> {
    this.stored = await patchStatus(this.api, capoKinds.OpenStackServer, this.stored, this.draft, { signal });
  }
}
