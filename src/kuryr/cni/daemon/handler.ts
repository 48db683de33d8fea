/**
 * What kuryr-daemon does for ADD, DEL and CHECK (upstream's K8sCNIRegistryPlugin): ADD waits for
 * the pod's active VIF and binds it at CNI_IFNAME; DEL unbinds (it needs no VIF: the binding finds
 * what it made from the interface and container alone) unless it is for an older container of the
 * pod than the last ADD; CHECK compares the sandbox with the VIF the cache holds.
 */
import type { Logger } from '../../../lib/log.ts';
import { podInterfaceOf } from '../interface.ts';
import { IpCommandError, netnsExists } from '../binding/ip.ts';
import {
  BindingCheckError,
  BindingUnsupportedError,
  type BindingDriver,
  type Sandbox,
} from '../binding/types.ts';
import { CniError, CniErrorCode, type CniRequest } from '../spec.ts';
import type { CniHandler } from './server.ts';
import type { KuryrPortWatch } from './kuryrports.ts';

export interface KuryrCniHandlerOptions {
  ports: KuryrPortWatch;
  binding: BindingDriver;
  /** `[cni_daemon] vif_annotation_timeout`, in ms. */
  vifTimeoutMs: number;
  log: Logger;
}

export class KuryrCniHandler implements CniHandler {
  private readonly opts: KuryrCniHandlerOptions;
  /** The container of each pod's last successful ADD: a DEL for another is a stale retry's. */
  private readonly containers = new Map<string, string>();
  /**
   * The tail of each pod's namespace work: one plug, unplug or check at a time per pod (upstream's
   * per-pod lock). The wait for the VIF is outside it, so a DEL never waits behind an ADD's wait.
   */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(options: KuryrCniHandlerOptions) {
    this.opts = options;
  }

  async add(req: CniRequest, _conf: unknown, signal: AbortSignal): Promise<unknown> {
    const { log, binding } = this.opts;
    if (!netnsExists(req.netns))
      throw new CniError(CniErrorCode.UnknownContainer, `the network namespace ${req.netns} does not exist`);
    const ready = await this.opts.ports.waitForVif(req.pod, this.opts.vifTimeoutMs, signal);
    const iface = podInterfaceOf(ready.vif, req.ifname);
    await this.serialized(req, async () => {
      await bound(binding, () => binding.connect(iface, sandbox(req), signal));
      this.containers.set(podKey(req), req.containerId);
    });
    log.info(
      {
        pod: podKey(req),
        port: ready.vif.id,
        vlan: ready.vif.vlanId,
        binding: binding.name,
        ifname: req.ifname,
      },
      'pod interface plugged',
    );
    return ready.primitive;
  }

  del(req: CniRequest, _conf: unknown, signal: AbortSignal): Promise<void> {
    return this.serialized(req, () => this.doDel(req, signal));
  }

  check(req: CniRequest, _conf: unknown, signal: AbortSignal): Promise<void> {
    return this.serialized(req, () => this.doCheck(req, signal));
  }

  /** Runs `fn` after the pod's earlier namespace work has settled. */
  private serialized<T>(req: CniRequest, fn: () => Promise<T>): Promise<T> {
    const key = podKey(req);
    const run = (this.tails.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }

  private async doDel(req: CniRequest, signal: AbortSignal): Promise<void> {
    const { log, binding } = this.opts;
    const last = this.containers.get(podKey(req));
    if (last !== undefined && last !== req.containerId) {
      log.warn(
        { pod: podKey(req), container: req.containerId, plugged: last },
        'DEL for a container other than the one last plugged: ignored, so the running pod keeps its interface',
      );
      return;
    }
    await bound(binding, () => binding.disconnect(req.ifname, sandbox(req), signal));
    this.containers.delete(podKey(req));
    log.info({ pod: podKey(req), ifname: req.ifname, binding: binding.name }, 'pod interface unplugged');
  }

  private async doCheck(req: CniRequest, signal: AbortSignal): Promise<void> {
    const { binding } = this.opts;
    if (!netnsExists(req.netns))
      throw new CniError(CniErrorCode.UnknownContainer, `the network namespace ${req.netns} does not exist`);
    const state = this.opts.ports.current(req.pod);
    if (!('ready' in state))
      throw new CniError(CniErrorCode.UnknownContainer, `CHECK of pod ${podKey(req)}: ${state.waiting}`);
    const iface = podInterfaceOf(state.ready.vif, req.ifname);
    await bound(binding, () => binding.check(iface, sandbox(req), signal));
  }
}

function podKey(req: CniRequest): string {
  return `${req.pod.namespace}/${req.pod.name}`;
}

function sandbox(req: CniRequest): Sandbox {
  return { netns: req.netns, containerId: req.containerId };
}

/** A binding's failure as the CNI error the runtime shows, with the fix where there is one. */
async function bound(binding: BindingDriver, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof BindingUnsupportedError)
      throw new CniError(CniErrorCode.Internal, `${binding.name} binding: ${err.message}`, `fix: ${err.fix}`);
    if (err instanceof BindingCheckError)
      throw new CniError(CniErrorCode.Internal, `CHECK failed: ${err.message}`);
    if (err instanceof IpCommandError && /File exists/i.test(err.stderr))
      // Upstream's "VLAN ID conflict": usually a sandbox of a deleted pod the runtime has not cleaned up yet.
      throw new CniError(
        CniErrorCode.TryAgainLater,
        `${binding.name} binding: an interface in the way (${err.message}). Try again later.`,
      );
    if (err instanceof IpCommandError)
      throw new CniError(CniErrorCode.Internal, `${binding.name} binding failed: ${err.message}`);
    throw err;
  }
}
