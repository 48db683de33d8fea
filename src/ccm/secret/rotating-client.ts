/**
 * An OpenStack client that follows the config source: every property read reaches the client built
 * from the current config, so after a rotation the next call authenticates with the new
 * credentials (the process-wide token cache is keyed by the auth body: new credentials, new token).
 *
 * A rotation that changes `[Global]` builds a new OpenStackClient before the reload is announced.
 * The old one is closed once the calls that started on it have settled (counted through
 * tracking.ts), and at the latest after `graceMs`, so a call that hangs cannot keep its connection
 * pool alive for ever. A Pager or waiter taken before a rotation and used after the old client is
 * closed fails like any broken connection; the controller's next reconcile goes through the new one.
 */
import type { Logger } from '../../lib/log.ts';
import { rootLogger } from '../../lib/log.ts';
import { OpenStackClient, type OpenStackClientOptions } from '../../openstack/client.ts';
import type { CloudConfig } from '../../openstack/config/types.ts';
import type { ServiceClient } from '../../openstack/core/service-client.ts';
import type { CcmConfig } from '../config/types.ts';
import type { CcmConfigSource } from '../secret-config.ts';
import { sameCloud } from './compare.ts';
import { tracked, type Leases } from './tracking.ts';

/** What controllers use of OpenStackClient; both OpenStackClient and RotatingClient have it. */
export type OpenStackApi = Pick<
  OpenStackClient,
  | 'config'
  | 'session'
  | 'identity'
  | 'compute'
  | 'network'
  | 'loadBalancer'
  | 'image'
  | 'blockStorage'
  | 'serviceClient'
  | 'service'
  | 'close'
>;

export interface RotatingClientOptions extends OpenStackClientOptions {
  /** The longest a replaced client stays open for calls still running on it. Default 60 s. */
  graceMs?: number | undefined;
  /** Builds a client from a config; OpenStackClient.fromConfig by default (tests count builds). */
  build?: ((config: CloudConfig, options: OpenStackClientOptions) => Promise<OpenStackClient>) | undefined;
}

const DEFAULT_GRACE_MS = 60_000;

/** One OpenStackClient and the calls running on it. */
class Generation implements Leases {
  readonly client: OpenStackClient;
  readonly view: OpenStackClient;
  readonly number: number;
  inFlight = 0;
  private retiring: ((why: string) => void) | undefined;
  private closed: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(client: OpenStackClient, number: number, log: Logger) {
    this.client = client;
    this.number = number;
    this.log = log;
    this.view = tracked(this, client);
  }

  acquire(): void {
    this.inFlight++;
  }

  release(): void {
    this.inFlight--;
    if (this.inFlight === 0) this.retiring?.('idle');
  }

  /** Closes now, whatever still runs (the process is stopping). */
  closeNow(): Promise<void> {
    this.retiring?.('client closed');
    return this.closed ?? this.client.close();
  }

  /** Closes once idle, or after `graceMs` whatever still runs. */
  retire(graceMs: number): Promise<void> {
    if (this.closed) return this.closed;
    this.closed = new Promise<void>((done) => {
      const timer = setTimeout(() => finish('grace period over'), graceMs);
      timer.unref();
      const finish = (why: string) => {
        if (!this.retiring) return;
        this.retiring = undefined;
        clearTimeout(timer);
        this.log.debug(
          { generation: this.number, inFlight: this.inFlight, why },
          'closing the replaced OpenStack client',
        );
        this.client.close().then(done, (err: unknown) => {
          this.log.warn({ err, generation: this.number }, 'closing the replaced OpenStack client failed');
          done();
        });
      };
      this.retiring = finish;
      if (this.inFlight === 0) finish('idle');
    });
    return this.closed;
  }
}

export class RotatingClient implements OpenStackApi {
  private gen: Generation;
  private readonly retired = new Set<Generation>();
  private readonly opts: RotatingClientOptions;
  private readonly log: Logger;
  private readonly unsubscribe: () => void;
  private closing: Promise<void> | undefined;

  constructor(source: CcmConfigSource, first: OpenStackClient, opts: RotatingClientOptions) {
    this.opts = opts;
    this.log = (opts.log ?? rootLogger()).child({ component: 'openstack-rotation' });
    this.gen = new Generation(first, 1, this.log);
    this.unsubscribe = source.onChange((next, previous) => this.rotate(next, previous));
  }

  /** How many clients have been built: 1 until the first credential rotation. */
  get generation(): number {
    return this.gen.number;
  }

  /** The config of the client in use. */
  get config(): CloudConfig {
    return this.gen.client.config;
  }

  get session(): OpenStackClient['session'] {
    return this.gen.client.session;
  }

  get identity(): OpenStackClient['identity'] {
    return this.gen.view.identity;
  }

  get compute(): OpenStackClient['compute'] {
    return this.gen.view.compute;
  }

  get network(): OpenStackClient['network'] {
    return this.gen.view.network;
  }

  get loadBalancer(): OpenStackClient['loadBalancer'] {
    return this.gen.view.loadBalancer;
  }

  get image(): OpenStackClient['image'] {
    return this.gen.view.image;
  }

  get blockStorage(): OpenStackClient['blockStorage'] {
    return this.gen.view.blockStorage;
  }

  serviceClient(
    ...args: Parameters<OpenStackClient['serviceClient']>
  ): ReturnType<OpenStackClient['serviceClient']> {
    return this.gen.view.serviceClient(...args);
  }

  service<T>(type: string, factory: (sc: ServiceClient) => T): T {
    return this.gen.view.service(type, factory);
  }

  /** Stops following the source and closes every client (running calls finish first). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.unsubscribe();
      await Promise.all([this.gen.client.close(), ...[...this.retired].map((g) => g.closeNow())]);
    })();
    return this.closing;
  }

  private async rotate(next: CcmConfig, previous: CcmConfig): Promise<void> {
    if (this.closing || sameCloud(previous, next)) return;
    const build = this.opts.build ?? ((c, o) => OpenStackClient.fromConfig(c, o));
    // fromConfig reads the TLS files; an error here keeps the old client, and the source logs it.
    const client = await build(next.cloud, this.opts);
    const old = this.gen;
    this.gen = new Generation(client, old.number + 1, this.log);
    this.retired.add(old);
    void old.retire(this.opts.graceMs ?? DEFAULT_GRACE_MS).then(() => this.retired.delete(old));
    this.log.info(
      { generation: this.gen.number, inFlightOnOld: old.inFlight },
      'new OpenStack client built from the rotated config; the next calls use it',
    );
  }
}

/** Builds the first client from the source's current config and follows its rotations. */
export async function rotatingClient(
  source: CcmConfigSource,
  opts: RotatingClientOptions = {},
): Promise<RotatingClient> {
  const build = opts.build ?? ((c, o) => OpenStackClient.fromConfig(c, o));
  const first = await build(source.current().cloud, opts);
  return new RotatingClient(source, first, opts);
}
