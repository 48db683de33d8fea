/** Listeners: /v2/lbaas/listeners, protocol rules, duplicate ports, default pools and stats. */
import { ipVersion, parseCidr } from '../../../lib/cidr.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { authorize, type Ctx } from './context.ts';
import { invalidOption, notFound, validation } from './errors.ts';
import { SimError } from '../core/errors.ts';
import { PROVISIONED_ATTRIBUTES } from './listing.ts';
import {
  CLIENT_AUTHENTICATION,
  DEFAULT_TIMEOUT_CLIENT_DATA,
  DEFAULT_TIMEOUT_MEMBER_CONNECT,
  DEFAULT_TIMEOUT_MEMBER_DATA,
  DEFAULT_TIMEOUT_TCP_INSPECT,
  LISTENER_POOL_PROTOCOLS,
  LISTENER_PROTOCOLS,
  MAX_TIMEOUT,
  SUPPORTED_HTTP_HEADERS,
  SUPPORTED_SSL_HEADERS,
  newProvisioned,
  transportOf,
  type ListenerRecord,
  type LoadBalancerRecord,
  type PoolRecord,
} from './model.ts';
import { ProviderDriver } from './providers.ts';
import { readHandlers } from './reads.ts';
import {
  bool,
  cidrList,
  enumOf,
  int,
  mandatory,
  parseRoot,
  str,
  strDict,
  strList,
  uuidField,
  type Fields,
  type Parsed,
} from './schema.ts';
import { listenerTarget } from './targets.ts';

/** Attributes a listener create and update share. */
export const LISTENER_MUTABLE_FIELDS: Fields = {
  name: str(),
  description: str(),
  admin_state_up: bool(),
  connection_limit: int(-1),
  default_tls_container_ref: str(),
  sni_container_refs: strList(),
  insert_headers: strDict(),
  timeout_client_data: int(0, MAX_TIMEOUT),
  timeout_member_connect: int(0, MAX_TIMEOUT),
  timeout_member_data: int(0, MAX_TIMEOUT),
  timeout_tcp_inspect: int(0, MAX_TIMEOUT),
  tags: strList(),
  client_ca_tls_container_ref: str(),
  client_authentication: enumOf(CLIENT_AUTHENTICATION),
  client_crl_container_ref: str(),
  allowed_cidrs: cidrList(),
  tls_ciphers: str(2048),
  tls_versions: strList(),
  alpn_protocols: strList(),
};

const LISTENER_POST_FIELDS: Fields = {
  ...LISTENER_MUTABLE_FIELDS,
  protocol: mandatory(enumOf(LISTENER_PROTOCOLS)),
  protocol_port: mandatory(int(1, 65535)),
  loadbalancer_id: mandatory(uuidField()),
  default_pool_id: uuidField(),
  project_id: str(),
  tenant_id: str(),
};

const LISTENER_PUT_FIELDS: Fields = { ...LISTENER_MUTABLE_FIELDS, default_pool_id: uuidField() };

const TLS_REF_FIELDS = [
  'default_tls_container_ref',
  'client_ca_tls_container_ref',
  'client_crl_container_ref',
];

/**
 * The API-level listener rules (octavia's ListenersController._validate_create_listener), for a
 * create or for the state a listener would have after an update.
 */
export function validateListenerOptions(
  protocol: string,
  l: Parsed,
  lb: LoadBalancerRecord | undefined,
): void {
  const sni = (l.sni_container_refs as string[] | null | undefined) ?? [];
  const hasTls = Boolean(TLS_REF_FIELDS.some((f) => l[f]) || sni.length > 0);
  const headers = (l.insert_headers as Record<string, string> | null | undefined) ?? {};
  if ((protocol === 'UDP' || protocol === 'SCTP') && (hasTls || Object.keys(headers).length > 0)) {
    throw validation(`${protocol} protocol listener does not support TLS or header insertion.`);
  }
  if (protocol !== 'TERMINATED_HTTPS' && hasTls) {
    throw validation(
      'Certificate container references are only allowed on TERMINATED_HTTPS protocol listeners.',
    );
  }
  if (protocol === 'TERMINATED_HTTPS' && !l.default_tls_container_ref && sni.length === 0) {
    throw validation(
      'An SNI or default certificate container reference must be provided for TERMINATED_HTTPS protocol listeners.',
    );
  }
  const clientAuth = (l.client_authentication as string | null | undefined) ?? 'NONE';
  if (clientAuth !== 'NONE' && !l.client_ca_tls_container_ref) {
    throw validation(`Client authentication setting ${clientAuth} requires a client CA container reference.`);
  }
  if (l.client_crl_container_ref && !l.client_ca_tls_container_ref) {
    throw validation(
      'A client authentication CA reference is required to specify a client authentication revocation list.',
    );
  }
  const names = Object.keys(headers);
  if (names.length > 0) {
    if (protocol !== 'HTTP' && protocol !== 'TERMINATED_HTTPS') {
      throw invalidOption('insert-headers', `a ${protocol} protocol listener.`);
    }
    const unknown = names.filter(
      (h) => !SUPPORTED_HTTP_HEADERS.includes(h) && !SUPPORTED_SSL_HEADERS.includes(h),
    );
    if (unknown.length > 0) throw invalidOption(pyList(names), 'insert_headers');
    const ssl = names.filter((h) => SUPPORTED_SSL_HEADERS.includes(h));
    if (protocol !== 'TERMINATED_HTTPS' && ssl.length > 0) {
      throw invalidOption(pyList(ssl), `${protocol} protocol listener.`);
    }
  }
  const cidrs = (l.allowed_cidrs as string[] | null | undefined) ?? [];
  const vipVersion = lb?.vip_address ? ipVersion(lb.vip_address) : 0;
  for (const cidr of cidrs) {
    const version = parseCidr(cidr)?.family ?? 0;
    if (vipVersion !== 0 && version !== vipVersion) {
      throw validation(`CIDR ${cidr} IP version incompatible with VIP ${lb!.vip_address} IP version.`);
    }
  }
}

/** A pool may only be the default pool of a listener whose protocol can send to it. */
export function checkPoolProtocol(listenerProtocol: string, poolProtocol: string): void {
  if (!(LISTENER_POOL_PROTOCOLS[listenerProtocol] ?? []).includes(poolProtocol)) {
    throw validation(
      `The pool protocol '${poolProtocol}' is invalid while the listener protocol is '${listenerProtocol}'.`,
    );
  }
}

/** 409 when another listener of the load balancer holds the port in the same transport. */
export function checkDuplicatePort(
  existing: readonly Pick<ListenerRecord, 'protocol' | 'protocol_port'>[],
  protocol: string,
  port: number,
): void {
  if (existing.some((l) => l.protocol_port === port && transportOf(l.protocol) === transportOf(protocol))) {
    throw new SimError(
      409,
      `Another Listener on this Load Balancer is already using protocol ${protocol} and protocol_port ${port}`,
    );
  }
}

export function newListener(l: Parsed, lb: LoadBalancerRecord, defaultPoolId: string | null): ListenerRecord {
  return {
    ...newProvisioned(l, lb.project_id),
    description: (l.description as string | null) ?? '',
    loadbalancer_id: lb.id,
    protocol: l.protocol as string,
    protocol_port: l.protocol_port as number,
    connection_limit: (l.connection_limit as number | null) ?? -1,
    default_tls_container_ref: (l.default_tls_container_ref as string | null) ?? null,
    sni_container_refs: (l.sni_container_refs as string[] | null) ?? [],
    default_pool_id: defaultPoolId,
    insert_headers: (l.insert_headers as Record<string, string> | null) ?? {},
    timeout_client_data: (l.timeout_client_data as number | null) ?? DEFAULT_TIMEOUT_CLIENT_DATA,
    timeout_member_connect: (l.timeout_member_connect as number | null) ?? DEFAULT_TIMEOUT_MEMBER_CONNECT,
    timeout_member_data: (l.timeout_member_data as number | null) ?? DEFAULT_TIMEOUT_MEMBER_DATA,
    timeout_tcp_inspect: (l.timeout_tcp_inspect as number | null) ?? DEFAULT_TIMEOUT_TCP_INSPECT,
    client_ca_tls_container_ref: (l.client_ca_tls_container_ref as string | null) ?? null,
    client_authentication: (l.client_authentication as string | null) ?? 'NONE',
    client_crl_container_ref: (l.client_crl_container_ref as string | null) ?? null,
    allowed_cidrs: (l.allowed_cidrs as string[] | null) ?? null,
    tls_ciphers: (l.tls_ciphers as string | null) ?? null,
    tls_versions: (l.tls_versions as string[] | null) ?? null,
    alpn_protocols: (l.alpn_protocols as string[] | null) ?? null,
    l7policy_ids: [],
  };
}

function pyList(items: string[]): string {
  return `[${items.map((i) => `'${i}'`).join(', ')}]`;
}

export const LISTENER_ATTRIBUTES: Readonly<Record<string, (l: ListenerRecord) => unknown>> = {
  ...PROVISIONED_ATTRIBUTES,
  name: (l) => l.name,
  description: (l) => l.description,
  protocol: (l) => l.protocol,
  protocol_port: (l) => l.protocol_port,
  connection_limit: (l) => l.connection_limit,
  default_pool_id: (l) => l.default_pool_id,
  loadbalancer_id: (l) => l.loadbalancer_id,
  default_tls_container_ref: (l) => l.default_tls_container_ref,
  timeout_client_data: (l) => l.timeout_client_data,
  timeout_member_connect: (l) => l.timeout_member_connect,
  timeout_member_data: (l) => l.timeout_member_data,
  timeout_tcp_inspect: (l) => l.timeout_tcp_inspect,
  client_authentication: (l) => l.client_authentication,
};

export function listenerHandlers(ctx: Ctx) {
  const { store, life, views } = ctx;

  function resolveDefaultPool(lb: LoadBalancerRecord, poolId: string, protocol: string): PoolRecord {
    const pool = store.pools.get(poolId);
    if (!pool || pool.loadbalancer_id !== lb.id) throw notFound('Pool', poolId);
    checkPoolProtocol(protocol, pool.protocol);
    return pool;
  }

  return {
    ...readHandlers({
      collection: 'listeners',
      item: 'listener',
      records: store.listeners,
      param: 'listener_id',
      find: (id) => store.listener(id),
      view: (l) => views.listener(l),
      attributes: LISTENER_ATTRIBUTES,
      ofLoadBalancer: (id) =>
        (store.loadbalancers.get(id)?.listener_ids ?? []).flatMap((l) => store.listeners.get(l) ?? []),
    }),

    create: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'listener', LISTENER_POST_FIELDS);
      const lb = store.loadbalancer(body.loadbalancer_id as string);
      authorize(req, lb.project_id);
      const protocol = body.protocol as string;
      validateListenerOptions(protocol, body, lb);
      const poolId = (body.default_pool_id as string | null | undefined) ?? null;
      const pool = poolId ? resolveDefaultPool(lb, poolId, protocol) : undefined;
      life.assertChildWritable(lb);
      const existing = lb.listener_ids.flatMap((id) => store.listeners.get(id) ?? []);
      checkDuplicatePort(existing, protocol, body.protocol_port as number);
      new ProviderDriver(lb.provider).listener({
        protocol,
        allowed_cidrs: body.allowed_cidrs as string[] | null | undefined,
      });
      const listener = newListener(body, lb, pool?.id ?? null);
      store.addListener(listener);
      life.createChild(lb, [], 'listener', [listener]);
      return { status: 201, body: { listener: views.listener(listener) } };
    },

    update: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'listener', LISTENER_PUT_FIELDS);
      const { listener, lb } = listenerTarget(store, req, req.params.listener_id!);
      const merged: Parsed = { ...listenerAsParsed(listener), ...body };
      validateListenerOptions(listener.protocol, merged, lb);
      // A pool may be the default pool of several listeners of the same load balancer.
      if (typeof body.default_pool_id === 'string' && body.default_pool_id !== listener.default_pool_id) {
        resolveDefaultPool(lb, body.default_pool_id, listener.protocol);
      }
      life.assertChildWritable(lb);
      new ProviderDriver(lb.provider).listener({
        allowed_cidrs: body.allowed_cidrs as string[] | null | undefined,
      });
      applyListenerUpdate(listener, body);
      if ('default_pool_id' in body)
        store.setDefaultPool(listener, (body.default_pool_id as string | null) ?? null);
      life.updateChild(lb, [], listener);
      return { status: 200, body: { listener: views.listener(listener) } };
    },

    remove: (req: SimRequest): SimResponse => {
      const { listener, lb } = listenerTarget(store, req, req.params.listener_id!);
      life.assertChildWritable(lb);
      life.deleteChild(lb, [], listener, () => store.removeListener(listener));
      return { status: 204 };
    },

    stats: (req: SimRequest): SimResponse => {
      const listener = store.listener(req.params.listener_id!);
      authorize(req, listener.project_id);
      return { status: 200, body: { stats: zeroStats() } };
    },
  };
}

export function zeroStats() {
  return { bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 };
}

function listenerAsParsed(l: ListenerRecord): Parsed {
  return { ...l };
}

/** PUT semantics: null resets limits and timeouts to their defaults, clears the rest. */
function applyListenerUpdate(l: ListenerRecord, body: Parsed): void {
  const set = <K extends keyof ListenerRecord>(key: K, fallback: ListenerRecord[K]) => {
    if (!(key in body)) return;
    const v = body[key as string];
    l[key] = (v === null ? fallback : v) as ListenerRecord[K];
  };
  set('name', '');
  set('description', '');
  set('admin_state_up', true);
  set('connection_limit', -1);
  set('default_tls_container_ref', null);
  set('sni_container_refs', []);
  set('insert_headers', {});
  set('timeout_client_data', DEFAULT_TIMEOUT_CLIENT_DATA);
  set('timeout_member_connect', DEFAULT_TIMEOUT_MEMBER_CONNECT);
  set('timeout_member_data', DEFAULT_TIMEOUT_MEMBER_DATA);
  set('timeout_tcp_inspect', DEFAULT_TIMEOUT_TCP_INSPECT);
  set('tags', []);
  set('client_ca_tls_container_ref', null);
  set('client_authentication', 'NONE');
  set('client_crl_container_ref', null);
  set('allowed_cidrs', null);
  set('tls_ciphers', null);
  set('tls_versions', null);
  set('alpn_protocols', null);
}
