/**
 * The daemon's view of its node's KuryrPorts (upstream's KuryrPortWatcherService and registry): one
 * informer on the KuryrPorts labelled `kuryr.openstack.org/nodeName=<node>`, and waits for a pod's
 * VIF that wake on the informer's events — never a poll — bounded by `vif_annotation_timeout`.
 */
import type { Logger } from '../../../lib/log.ts';
import type { Registry } from '../../../lib/metrics.ts';
import { abortReason, systemClock, type Clock } from '../../../lib/clock.ts';
import { Informer, type KubeClient } from '../../../kube/index.ts';
import { kuryrKinds, type KuryrPort } from '../../api/kinds.ts';
import { Labels } from '../../api/names.ts';
import { defaultVif, VifFormatError, type Vif } from '../../api/vif.ts';
import { CniError, CniErrorCode } from '../spec.ts';

export interface PodRef {
  namespace: string;
  name: string;
  /** K8S_POD_UID when the runtime gives it: a KuryrPort of an earlier pod of that name does not count. */
  uid?: string | undefined;
}

/** A pod's VIF, ready to bind. */
export interface ReadyVif {
  kuryrPort: KuryrPort;
  /** The interface name the VIF is stored under (`eth0`). */
  ifname: string;
  vif: Vif;
  /** As stored: what the daemon answers ADD with. */
  primitive: unknown;
}

/** `uidMismatch`: the KuryrPort is another pod's of that name (upstream's CNIPodUidMismatch). */
type State = { ready: ReadyVif } | { waiting: string; uidMismatch?: boolean };

export interface KuryrPortWatchOptions {
  client: KubeClient;
  nodeName: string;
  log: Logger;
  registry?: Registry;
  clock?: Clock;
}

export class KuryrPortWatch {
  readonly informer: Informer<KuryrPort>;
  private readonly clock: Clock;
  private readonly wakers = new Set<() => void>();

  constructor(options: KuryrPortWatchOptions) {
    this.clock = options.clock ?? systemClock;
    this.informer = new Informer<KuryrPort>({
      client: options.client,
      type: kuryrKinds.KuryrPort,
      labelSelector: `${Labels.KuryrPortNode}=${options.nodeName}`,
      log: options.log,
      clock: this.clock,
      ...(options.registry ? { registry: options.registry } : {}),
    });
    const wake = () => {
      for (const w of [...this.wakers]) w();
    };
    this.informer.addHandler({ onAdd: wake, onUpdate: wake, onDelete: wake });
  }

  /** Runs until `signal` aborts. */
  start(signal: AbortSignal): Promise<void> {
    return this.informer.start(signal);
  }

  hasSynced(): boolean {
    return this.informer.hasSynced();
  }

  /** The pod's VIF as the cache holds it now (CHECK: no wait), or why there is none. */
  current(pod: PodRef): State {
    const kp = this.informer.get(`${pod.namespace}/${pod.name}`);
    if (!kp) return { waiting: `no KuryrPort ${pod.namespace}/${pod.name} on this node yet` };
    if (pod.uid && kp.spec.podUid !== pod.uid)
      return {
        waiting: `KuryrPort ${pod.namespace}/${pod.name} is for pod uid ${kp.spec.podUid}, not ${pod.uid}`,
        uidMismatch: true,
      };
    let found;
    try {
      found = defaultVif(kp.status?.vifs);
    } catch (err) {
      if (err instanceof VifFormatError)
        throw new CniError(
          CniErrorCode.Internal,
          `KuryrPort ${pod.namespace}/${pod.name} holds a VIF that cannot be read`,
          err.message,
        );
      throw err;
    }
    if (!found) return { waiting: `KuryrPort ${pod.namespace}/${pod.name} has no VIF yet (status.vifs)` };
    if (!found.vif.active)
      return {
        waiting: `the VIF of KuryrPort ${pod.namespace}/${pod.name} (port ${found.vif.id}) is not active yet`,
      };
    const primitive = kp.status?.vifs[found.ifname]?.vif;
    return { ready: { kuryrPort: kp, ifname: found.ifname, vif: found.vif, primitive } };
  }

  /**
   * Resolves once the pod's KuryrPort has an active default VIF. Checked now and on every event of
   * the informer; after `timeoutMs` a "try again later" (an "unknown container" when the KuryrPort
   * is another pod's of that name) naming what it was still waiting for.
   */
  waitForVif(pod: PodRef, timeoutMs: number, signal: AbortSignal): Promise<ReadyVif> {
    return new Promise<ReadyVif>((resolve, reject) => {
      let last: State = { waiting: 'the KuryrPort cache has not synced yet' };
      const done = (fn: () => void) => {
        this.wakers.delete(check);
        cancelTimer();
        signal.removeEventListener('abort', onAbort);
        fn();
      };
      const check = () => {
        try {
          last = this.current(pod);
        } catch (err) {
          done(() => reject(err instanceof Error ? err : new Error(String(err))));
          return;
        }
        if ('ready' in last) {
          const ready = last.ready;
          done(() => resolve(ready));
        }
      };
      const onAbort = () => done(() => reject(abortReason(signal)));
      const cancelTimer = this.clock.setTimer(timeoutMs, () =>
        done(() =>
          reject(
            new CniError(
              'waiting' in last && last.uidMismatch
                ? CniErrorCode.UnknownContainer
                : CniErrorCode.TryAgainLater,
              `timed out after ${timeoutMs / 1000} s waiting for the VIF of pod ${pod.namespace}/${pod.name}. Try again later.`,
              'waiting' in last ? last.waiting : '',
            ),
          ),
        ),
      );
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.wakers.add(check);
      if (this.hasSynced()) check();
    });
  }
}
