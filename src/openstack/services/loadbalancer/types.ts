/**
 * The contract of the shared load-balancer path: what a caller (the CCM's Service controller,
 * Kuryr) wants — a `DesiredLoadBalancer` — and what one `ensure` or `remove` call reports back.
 *
 * The types know nothing of Kubernetes: names, descriptions and tags are computed by the caller
 * (the CCM spells them as OCCM does) and passed in, so the engine can find and adopt exactly what
 * an earlier run, an earlier process or OCCM itself created.
 */
import type { TagFilters } from '../../core/resource.ts';
import type { ListenerProtocol } from '../../loadbalancer/v2/listeners.ts';
import type { LoadBalancer } from '../../loadbalancer/v2/loadbalancers.ts';
import type { HealthMonitorType } from '../../loadbalancer/v2/healthmonitors.ts';
import type { LbAlgorithm, PoolProtocol, SessionPersistence } from '../../loadbalancer/v2/pools.ts';
import type { FloatingIp } from '../../network/v2/floating-ips.ts';
import type { Subnet } from '../../network/v2/subnets.ts';

/**
 * Who a load balancer belongs to. Every object the engine creates carries `name`-derived names
 * and tags, so a process that died between two calls finds its work again instead of repeating it.
 */
export interface LoadBalancerIdentity {
  /** The deterministic name (`kube_service_<cluster>_<ns>_<name>`); also the ownership tag. */
  name: string;
  /** Names an earlier controller used (the in-tree `a<uid>`, an old cluster name): found and adopted. */
  legacyNames?: readonly string[] | undefined;
  /** Rename a load balancer found under a legacy name to `name` (OCCM does so on a cluster rename). */
  renameLegacy?: boolean | undefined;
  /** Written on create (`Kubernetes external service <ns>/<name> from cluster <cluster>`). */
  description: string;
  /**
   * Tags put on the load balancer and on every listener and pool created (API 2.5), besides
   * `name`, which is always the first. Tags are added, never removed from an existing load balancer.
   */
  tags?: readonly string[] | undefined;
  /** A known id (the CCM's load-balancer-id annotation): looked up first. */
  id?: string | undefined;
  /**
   * Names this identity's load balancer may carry that cannot be listed, e.g. the CCM's, which embeds
   * a cluster name the in-tree stand-in does not know: one found by the recorded `id` under such a
   * name is owned (adopted), not shared. Name lookups still use `name` and `legacyNames` only.
   */
  alsoNamed?: ((name: string) => boolean) | undefined;
  /**
   * Write no tags, and compare none (the in-tree provider never tagged). Objects keep the tags others
   * put on them.
   */
  tagless?: boolean | undefined;
  /**
   * Names that say by themselves which identity a load balancer serves (the in-tree provider's
   * `a<uid>`), so that identity may have left it untagged: another identity joining such a load
   * balancer counts that one among those it serves (max-shared-lb).
   */
  taglessOwner?: ((name: string) => boolean) | undefined;
  /**
   * Tags starting with this prefix name other identities sharing the load balancer (`kube_service_`
   * for the CCM). Without it, nothing on a load balancer we own is taken for someone else's.
   */
  sharedTagPrefix?: string | undefined;
  /**
   * max-shared-lb: joining a load balancer this identity does not own (found by `id`) is refused
   * once it carries this many identities. Undefined: no limit.
   */
  maxShared?: number | undefined;
}

export interface DesiredVip {
  subnetId?: string | undefined;
  networkId?: string | undefined;
  portId?: string | undefined;
  /** A fixed VIP address (the CCM passes loadBalancerIP for internal and IPv6 Services). */
  address?: string | undefined;
}

export interface DesiredMember {
  /** The batch path names members after their node; the serial path by node, address and port. */
  name?: string | undefined;
  address: string;
  port: number;
  subnetId?: string | undefined;
  /** Octavia's default is 1. */
  weight?: number | undefined;
  /** healthCheckNodePort for ETP=Local's HTTP monitor. */
  monitorPort?: number | undefined;
  monitorAddress?: string | undefined;
  backup?: boolean | undefined;
}

export interface DesiredHealthMonitor {
  name: string;
  type: HealthMonitorType;
  /** Seconds. */
  delay: number;
  timeout: number;
  maxRetries: number;
  maxRetriesDown?: number | undefined;
  /** HTTP and HTTPS monitors only. */
  httpMethod?: string | undefined;
  urlPath?: string | undefined;
  expectedCodes?: string | undefined;
}

export interface DesiredPool {
  name: string;
  /** PROXY / PROXYV2 for the proxy protocol; HTTP behind an HTTP listener; else the listener's. */
  protocol: PoolProtocol;
  algorithm: LbAlgorithm;
  /** Undefined: left as it is; null: none. */
  sessionPersistence?: SessionPersistence | null | undefined;
  members: readonly DesiredMember[];
  /** Absent: the pool has no monitor (an existing one is deleted). */
  healthMonitor?: DesiredHealthMonitor | undefined;
}

export interface ListenerTimeouts {
  /** Milliseconds (API 2.1; not on OVN). */
  clientData?: number | undefined;
  memberConnect?: number | undefined;
  memberData?: number | undefined;
  tcpInspect?: number | undefined;
}

/**
 * One listener and its default pool. Listeners are matched by (protocol, port); an optional field
 * left undefined is not managed (whatever the listener has stays), so a caller that cannot use a
 * feature on this cloud simply leaves it out.
 */
export interface DesiredListener {
  name: string;
  protocol: ListenerProtocol;
  port: number;
  /** -1: unlimited. */
  connectionLimit?: number | undefined;
  /** API 2.12, not on OVN. null or []: every source. */
  allowedCidrs?: readonly string[] | null | undefined;
  timeouts?: ListenerTimeouts | undefined;
  /** `{ 'X-Forwarded-For': 'true' }` */
  insertHeaders?: Readonly<Record<string, string>> | undefined;
  defaultTlsContainerRef?: string | null | undefined;
  pool: DesiredPool;
}

/** Which subnet of the floating network the address comes from; candidates are tried in turn. */
export type FloatingSubnetChoice =
  | { id: string }
  | {
      /** Sent with the subnet list (tags, tags-any, not-tags, not-tags-any). */
      tags?: TagFilters | undefined;
      /** Applied to each subnet of the floating network (the CCM's name pattern). */
      match?: ((subnet: Subnet) => boolean) | undefined;
    };

/**
 * The floating IP of the VIP. Only floating IPs whose description contains `ownedMarker` are ever
 * deleted; any other one (a user's loadBalancerIP) is only detached.
 */
export interface FloatingIpIntent {
  /** false: the load balancer is internal, and a floating IP on its VIP is released per the rules. */
  external: boolean;
  /** Undefined: the first external network with a subnet. */
  networkId?: string | undefined;
  subnet?: FloatingSubnetChoice | undefined;
  /** An address to adopt (free, or already on the VIP) or to create (often forbidden by policy). */
  address?: string | undefined;
  /** Written on the floating IPs the engine creates; must contain `ownedMarker`. */
  description: string;
  /** The substring that marks floating IPs created by us (OCCM's `Floating IP for Kubernetes external service`). */
  ownedMarker: string;
  /** keep-floatingip: never delete, only detach, even ours. */
  keep?: boolean | undefined;
  /**
   * Floating IPs without a description are ours too: the in-tree provider made them so (and deleted
   * whatever address its load balancer had). Off for the CCM: a user's address may have none.
   */
  ownsUndescribed?: boolean | undefined;
}

export interface DesiredLoadBalancer {
  identity: LoadBalancerIdentity;
  vip: DesiredVip;
  /** Octavia's default provider when undefined. Set at create only. */
  provider?: string | undefined;
  /** API 2.6; set at create only. */
  flavorId?: string | undefined;
  /** API 2.14; set at create only. */
  availabilityZone?: string | undefined;
  listeners: readonly DesiredListener[];
  /** Undefined: the engine never touches floating IPs (Kuryr, or a caller that manages them). */
  floatingIp?: FloatingIpIntent | undefined;
  /**
   * provider-requires-serial-api-calls: no fully populated create; every object, every member,
   * is its own call, with a Pending between two.
   */
  serialApiCalls?: boolean | undefined;
  /** cloud.conf `cascade-delete`: false removes pools and listeners one call each before the load balancer. */
  cascadeDelete?: boolean | undefined;
}

/** One write the engine made, for logs, Events and tests. */
export interface Action {
  verb: 'create' | 'update' | 'delete' | 'replace' | 'associate' | 'disassociate';
  resource: 'loadbalancer' | 'listener' | 'pool' | 'members' | 'member' | 'healthmonitor' | 'floatingip';
  id?: string | undefined;
  name?: string | undefined;
  /** What changed, in a few words (`3 members`, `connection_limit`). */
  detail?: string | undefined;
}

/** Something the caller should tell the user about (an Event), with OCCM's reason where it has one. */
export interface Warning {
  reason: string;
  message: string;
}

export interface VipInfo {
  address: string;
  portId: string;
  subnetId: string;
  networkId: string;
}

interface Outcome {
  /** Writes made by this call, in order. */
  actions: Action[];
  warnings: Warning[];
  /** The load balancer as last read or created, once one exists: record its id early. */
  loadBalancer?: LoadBalancer | undefined;
  /** False when the load balancer was found by id under another identity's name (shared). */
  owned?: boolean | undefined;
}

export interface Ready extends Outcome {
  phase: 'Ready';
  loadBalancer: LoadBalancer;
  vip: VipInfo;
  floatingIp?: FloatingIp | undefined;
  /** What to advertise: the floating IP when there is one, else the VIP. */
  address: string;
}

export type PendingReason =
  /**
   * Octavia works on it or on one of its children (PENDING_CREATE / PENDING_UPDATE / PENDING_DELETE),
   * or we just wrote.
   */
  | 'LoadBalancerPending'
  /**
   * The load balancer, or one of its listeners, pools, members or monitors (named in the message),
   * PENDING_* for longer than the engine's `stuckAfterMs` (age of updated_at): raise an Event and a metric.
   */
  | 'LoadBalancerStuck'
  /** A write was refused with 409 (another writer got there first): requeue and re-read. */
  | 'Conflict'
  /** 429 / 503 from the cloud. */
  | 'RateLimited'
  /** remove(): deletion in progress. */
  | 'Deleting';

export interface Pending extends Outcome {
  phase: 'Pending';
  reason: PendingReason;
  /** When to call again; PENDING waits are capped (≤ 10 s). */
  retryAfterMs: number;
  message: string;
}

export type FailedReason =
  | 'MultipleLoadBalancers'
  | 'LoadBalancerError'
  | 'PortConflict'
  | 'ShareLimit'
  | 'SharedInternal'
  | 'FloatingIpInUse'
  | 'FloatingIpFailed'
  | 'InvalidRequest'
  | 'Forbidden'
  | 'ProviderUnsupported';

/**
 * An input of the desired state, as a refusal names it: the caller maps it back to where the value
 * came from (an annotation, a config key) to tell the user what to fix.
 */
export type RefusedInput =
  | 'flavorId'
  | 'availabilityZone'
  | 'provider'
  | 'vip.subnetId'
  | 'vip.networkId'
  | 'vip.portId'
  | 'vip.address'
  | 'floatingIp.networkId'
  | 'floatingIp.subnet'
  | 'floatingIp.address';

export interface Failed extends Outcome {
  phase: 'Failed';
  reason: FailedReason;
  message: string;
  /** The input the cloud refused, when its answer names one (a flavor, a subnet, a network). */
  refused?: RefusedInput | undefined;
  /** What the cloud said, without method or URL (the message has both). */
  cloudMessage?: string | undefined;
  /**
   * The load balancer is ours and in ERROR: `remove` it and `ensure` again — at most once per
   * backoff window, which is the caller's to keep.
   */
  recreate?: boolean | undefined;
}

export type EnsureResult = Ready | Pending | Failed;

export interface Deleted extends Outcome {
  phase: 'Deleted';
}

export type RemoveResult = Deleted | Pending | Failed;

export interface CallOptions {
  signal?: AbortSignal | undefined;
}
