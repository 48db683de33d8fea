/**
 * OpenStackClient: a Session and its ServiceClients for one cloud, built from a resolved CloudConfig.
 *
 *   const { config } = await resolveCloudConfig({ ...processContext(signal) });
 *   const os = await OpenStackClient.fromConfig(config, { registry, log, signal });
 *   const me = await os.identity.projects.listMine({ signal }).all();
 *   const nova = os.serviceClient('compute');
 *   await nova.negotiateMicroversion('2.79', { signal });
 *
 *   const port = await os.network.ports.create({ network_id }, { signal });
 *   const lb = await os.loadBalancer.loadBalancers.get(id, { signal });
 *
 * Extension point: a service namespace is a factory `(sc: ServiceClient) => api` (see
 * `identity/v3/index.ts`), bound once per client with `service()`:
 *
 *   get network(): NetworkV2 { return this.service('network', networkV2); }
 */
import type { Logger } from '../lib/log.ts';
import { rootLogger } from '../lib/log.ts';
import type { Registry } from '../lib/metrics.ts';
import type { CloudConfig } from './config/types.ts';
import type { Clock } from '../lib/clock.ts';
import type { DiscoveryCache } from './core/discovery.ts';
import type { RetryPolicy } from './core/retry.ts';
import { ServiceClient, type ServiceClientOptions } from './core/service-client.ts';
import { Session } from './core/session.ts';
import { createDispatcher } from './core/tls.ts';
import type { RefreshPolicy, TokenCache } from './core/token-cache.ts';
import { Transport } from './core/transport.ts';
import { blockStorageV3, type BlockStorageV3 } from './blockstorage/v3/index.ts';
import { computeV2, type ComputeV2 } from './compute/v2/index.ts';
import { identityV3, type IdentityV3 } from './identity/v3/index.ts';
import { imageV2, type ImageV2 } from './image/v2/index.ts';
import { loadBalancerV2, type LoadBalancerV2 } from './loadbalancer/v2/index.ts';
import { networkV2, type NetworkV2 } from './network/v2/index.ts';

export interface OpenStackClientOptions {
  /** Where the OCCM-compatible API metrics go; none are recorded without one. */
  registry?: Registry | undefined;
  /** Defaults to the root logger; API calls are logged at debug. */
  log?: Logger | undefined;
  /** Bounds the setup I/O (reading the TLS files). */
  signal?: AbortSignal | undefined;
  /** Overrides the config's request timeout (per attempt). */
  requestTimeoutMs?: number | undefined;
  retry?: Partial<RetryPolicy> | undefined;
  /** Requests in flight per service. Default 16. */
  concurrency?: number | undefined;
  /** Defaults to the process-wide cache. */
  tokenCache?: TokenCache | undefined;
  refresh?: Partial<RefreshPolicy> | undefined;
  discoveryCache?: DiscoveryCache | undefined;
  clock?: Clock | undefined;
  userAgent?: string | undefined;
}

type ServiceFactory = (sc: ServiceClient) => unknown;

export class OpenStackClient {
  readonly config: CloudConfig;
  readonly session: Session;
  private readonly discoveryCache: DiscoveryCache | undefined;
  private readonly clients = new Map<string, ServiceClient>();
  private readonly services = new Map<string, Map<ServiceFactory, unknown>>();

  private constructor(session: Session, options: OpenStackClientOptions) {
    this.session = session;
    this.config = session.config;
    this.discoveryCache = options.discoveryCache;
  }

  /** Builds the connection pool from the config's TLS settings (reading its files), the transport and the session. No call to the cloud yet. */
  static async fromConfig(
    config: CloudConfig,
    options: OpenStackClientOptions = {},
  ): Promise<OpenStackClient> {
    const log = (options.log ?? rootLogger()).child({ component: 'openstack' });
    const dispatcher = await createDispatcher(config, { signal: options.signal });
    const transport = new Transport({
      dispatcher,
      requestTimeoutMs: options.requestTimeoutMs ?? config.requestTimeoutMs,
      retry: options.retry,
      concurrency: options.concurrency,
      registry: options.registry,
      log,
      clock: options.clock,
      userAgent: options.userAgent,
    });
    const session = new Session(config, {
      transport,
      log,
      tokenCache: options.tokenCache,
      refresh: options.refresh,
      clock: options.clock,
    });
    return new OpenStackClient(session, options);
  }

  /**
   * The ServiceClient for a service type (`compute`, `network`, `load-balancer`, `image`,
   * `block-storage`, `placement`, …). Clients are cached per options, so a microversion negotiated on
   * one is seen by every caller that asked for the same one.
   */
  serviceClient(type: string, options: Omit<ServiceClientOptions, 'type'> = {}): ServiceClient {
    const key = JSON.stringify([
      type,
      options.interface,
      options.region,
      options.microversion,
      options.endpoint,
    ]);
    let client = this.clients.get(key);
    if (!client) {
      client = new ServiceClient(this.session, {
        ...options,
        type,
        discoveryCache: options.discoveryCache ?? this.discoveryCache,
      });
      this.clients.set(key, client);
    }
    return client;
  }

  /** A service namespace bound to this client's ServiceClient for `type`, created once. */
  service<T>(type: string, factory: (sc: ServiceClient) => T): T {
    let byFactory = this.services.get(type);
    if (!byFactory) this.services.set(type, (byFactory = new Map<ServiceFactory, unknown>()));
    if (!byFactory.has(factory)) byFactory.set(factory, factory(this.serviceClient(type)));
    return byFactory.get(factory) as T;
  }

  /** Keystone v3: tokens, projects, application credentials, catalog. */
  get identity(): IdentityV3 {
    return this.service('identity', identityV3);
  }

  /** Nova v2.1: servers, flavors, keypairs, server groups, availability zones, interfaces. Microversion 2.79 or the cloud's maximum, negotiated on first use. */
  get compute(): ComputeV2 {
    return this.service('compute', computeV2);
  }

  /** Neutron v2.0: networks, subnets, ports, trunks, security groups, routers, floating IPs, tags, extensions, quotas. */
  get network(): NetworkV2 {
    return this.service('network', networkV2);
  }

  /** Octavia v2: load balancers, listeners, pools, members, health monitors, L7, providers, API versions. */
  get loadBalancer(): LoadBalancerV2 {
    return this.service('load-balancer', loadBalancerV2);
  }

  /** Glance v2: images. */
  get image(): ImageV2 {
    return this.service('image', imageV2);
  }

  /** Cinder v3: volumes, volume types, availability zones. Microversion 3.42 or the cloud's maximum, negotiated on first use. */
  get blockStorage(): BlockStorageV3 {
    return this.service('block-storage', blockStorageV3);
  }

  /** True once closed: every call then fails with ClientClosedError. */
  get closed(): boolean {
    return this.session.transport.closed;
  }

  /**
   * Closes the connection pool once the requests in flight have their answers; later calls fail
   * with ClientClosedError. The token stays in the process-wide cache for other clients.
   */
  async close(): Promise<void> {
    await this.session.transport.close();
  }
}
