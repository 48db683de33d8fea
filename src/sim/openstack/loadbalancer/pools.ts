/** Pools: /v2/lbaas/pools, protocol and session persistence rules, one default pool per listener. */
import { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { authorize, type Ctx } from './context.ts';
import { validation } from './errors.ts';
import { checkPoolProtocol } from './listeners.ts';
import { PROVISIONED_ATTRIBUTES } from './listing.ts';
import {
  LB_ALGORITHMS,
  POOL_PROTOCOLS,
  SESSION_PERSISTENCE_TYPES,
  newProvisioned,
  type ListenerRecord,
  type LoadBalancerRecord,
  type PoolRecord,
  type SessionPersistence,
} from './model.ts';
import { ProviderDriver } from './providers.ts';
import { readHandlers } from './reads.ts';
import {
  bool,
  enumOf,
  int,
  mandatory,
  obj,
  parseRoot,
  str,
  strList,
  uuidField,
  type Fields,
  type Parsed,
} from './schema.ts';
import { poolTarget } from './targets.ts';

export const SESSION_PERSISTENCE_FIELDS: Fields = {
  type: mandatory(enumOf(SESSION_PERSISTENCE_TYPES)),
  cookie_name: str(),
  persistence_timeout: int(0),
  persistence_granularity: str(),
};

export const POOL_MUTABLE_FIELDS: Fields = {
  name: str(),
  description: str(),
  admin_state_up: bool(),
  lb_algorithm: enumOf(LB_ALGORITHMS),
  session_persistence: obj(SESSION_PERSISTENCE_FIELDS),
  tags: strList(),
  tls_container_ref: str(),
  ca_tls_container_ref: str(),
  crl_container_ref: str(),
  tls_enabled: bool(),
  tls_ciphers: str(2048),
  tls_versions: strList(),
  alpn_protocols: strList(),
};

const POOL_POST_FIELDS: Fields = {
  ...POOL_MUTABLE_FIELDS,
  protocol: mandatory(enumOf(POOL_PROTOCOLS)),
  lb_algorithm: mandatory(enumOf(LB_ALGORITHMS)),
  listener_id: uuidField(),
  loadbalancer_id: uuidField(),
  project_id: str(),
  tenant_id: str(),
};

/** Octavia's session persistence rules (pool controller and validate.check_session_persistence). */
export function validatePoolOptions(protocol: string, p: Parsed): void {
  const sp = p.session_persistence as Parsed | null | undefined;
  if (sp) {
    const type = sp.type as string;
    if (protocol === 'UDP' || protocol === 'SCTP') {
      if (type === 'HTTP_COOKIE' || type === 'APP_COOKIE') {
        throw validation(
          `Session persistence of type ${type} is not supported for ${protocol} protocol pools.`,
        );
      }
      if (sp.cookie_name) throw validation(`Cookie names are not supported for ${protocol} pools.`);
    } else if (sp.persistence_timeout || sp.persistence_granularity) {
      throw validation('persistence_timeout and persistence_granularity is only for UDP protocol pools.');
    }
    if (sp.cookie_name && type !== 'APP_COOKIE') {
      throw validation(
        'Field "cookie_name" can only be specified with session persistence of type "APP_COOKIE".',
      );
    }
    if (type === 'APP_COOKIE' && !sp.cookie_name) {
      throw validation(
        'Field "cookie_name" must be specified when using the "APP_COOKIE" session persistence type.',
      );
    }
  }
  if (p.crl_container_ref && !p.ca_tls_container_ref) {
    throw validation('A CA certificate reference is required to specify a revocation list.');
  }
}

export function sessionPersistence(sp: Parsed | null | undefined): SessionPersistence | null {
  if (!sp) return null;
  return {
    type: sp.type as string,
    cookie_name: (sp.cookie_name as string | null | undefined) ?? null,
    persistence_timeout: (sp.persistence_timeout as number | null | undefined) ?? null,
    persistence_granularity: (sp.persistence_granularity as string | null | undefined) ?? null,
  };
}

export function newPool(p: Parsed, lb: LoadBalancerRecord): PoolRecord {
  return {
    ...newProvisioned(p, lb.project_id),
    description: (p.description as string | null) ?? '',
    loadbalancer_id: lb.id,
    protocol: p.protocol as string,
    lb_algorithm: p.lb_algorithm as string,
    session_persistence: sessionPersistence(p.session_persistence as Parsed | null | undefined),
    listener_ids: [],
    healthmonitor_id: null,
    tls_container_ref: (p.tls_container_ref as string | null) ?? null,
    ca_tls_container_ref: (p.ca_tls_container_ref as string | null) ?? null,
    crl_container_ref: (p.crl_container_ref as string | null) ?? null,
    tls_enabled: (p.tls_enabled as boolean | null) ?? false,
    tls_ciphers: (p.tls_ciphers as string | null) ?? null,
    tls_versions: (p.tls_versions as string[] | null) ?? null,
    alpn_protocols: (p.alpn_protocols as string[] | null) ?? null,
  };
}

export const POOL_ATTRIBUTES: Readonly<Record<string, (p: PoolRecord) => unknown>> = {
  ...PROVISIONED_ATTRIBUTES,
  name: (p) => p.name,
  description: (p) => p.description,
  protocol: (p) => p.protocol,
  lb_algorithm: (p) => p.lb_algorithm,
  loadbalancer_id: (p) => p.loadbalancer_id,
  healthmonitor_id: (p) => p.healthmonitor_id,
  tls_enabled: (p) => p.tls_enabled,
};

export function poolHandlers(ctx: Ctx) {
  const { store, life, views } = ctx;

  return {
    ...readHandlers({
      collection: 'pools',
      item: 'pool',
      records: store.pools,
      param: 'pool_id',
      find: (id) => store.pool(id),
      view: (p) => views.pool(p),
      attributes: POOL_ATTRIBUTES,
      ofLoadBalancer: (id) =>
        (store.loadbalancers.get(id)?.pool_ids ?? []).flatMap((p) => store.pools.get(p) ?? []),
    }),

    create: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'pool', POOL_POST_FIELDS);
      const protocol = body.protocol as string;
      validatePoolOptions(protocol, body);
      let listener: ListenerRecord | undefined;
      let lb: LoadBalancerRecord;
      if (body.listener_id) {
        listener = store.listener(body.listener_id as string);
        lb = store.lbOfListener(listener);
      } else if (body.loadbalancer_id) {
        lb = store.loadbalancer(body.loadbalancer_id as string);
      } else {
        throw validation('Must provide at least one of: loadbalancer_id, listener_id');
      }
      authorize(req, lb.project_id);
      if (listener) {
        checkPoolProtocol(listener.protocol, protocol);
        if (listener.default_pool_id) throw new SimError(409, 'This listener already has a default pool');
      }
      life.assertChildWritable(lb);
      new ProviderDriver(lb.provider).pool({
        protocol,
        lb_algorithm: body.lb_algorithm as string,
        session_persistence: body.session_persistence as Parsed | null | undefined,
      });
      const pool = newPool(body, lb);
      store.addPool(pool);
      if (listener) store.setDefaultPool(listener, pool.id);
      life.createChild(lb, listener ? [listener] : [], 'pool', [pool]);
      return { status: 201, body: { pool: views.pool(pool) } };
    },

    update: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'pool', POOL_MUTABLE_FIELDS);
      const { pool, lb } = poolTarget(store, req, req.params.pool_id!);
      validatePoolOptions(pool.protocol, {
        ca_tls_container_ref: pool.ca_tls_container_ref,
        crl_container_ref: pool.crl_container_ref,
        ...body,
      });
      life.assertChildWritable(lb);
      new ProviderDriver(lb.provider).pool({
        lb_algorithm: body.lb_algorithm as string | undefined,
        session_persistence: body.session_persistence as Parsed | null | undefined,
      });
      applyPoolUpdate(pool, body);
      life.updateChild(lb, store.listenersOfPool(pool), pool);
      return { status: 200, body: { pool: views.pool(pool) } };
    },

    remove: (req: SimRequest): SimResponse => {
      const { pool, lb } = poolTarget(store, req, req.params.pool_id!);
      const policy = store.policiesRedirectingTo(pool)[0];
      if (policy) throw new SimError(409, `Pool ${pool.id} is in use by L7 policy ${policy.id}`);
      life.assertChildWritable(lb);
      const hm = store.healthmonitorOf(pool);
      // Members and the monitor go with the pool: removePool unlinks them.
      const along = [...store.membersOf(pool), ...(hm ? [hm] : [])];
      life.deleteChild(lb, store.listenersOfPool(pool), pool, () => store.removePool(pool), along);
      return { status: 204 };
    },
  };
}

function applyPoolUpdate(pool: PoolRecord, body: Parsed): void {
  if ('name' in body) pool.name = (body.name as string | null) ?? '';
  if ('description' in body) pool.description = (body.description as string | null) ?? '';
  if ('admin_state_up' in body) pool.admin_state_up = (body.admin_state_up as boolean | null) ?? true;
  if (typeof body.lb_algorithm === 'string') pool.lb_algorithm = body.lb_algorithm;
  if ('session_persistence' in body) {
    pool.session_persistence = sessionPersistence(body.session_persistence as Parsed | null);
  }
  if ('tags' in body) pool.tags = (body.tags as string[] | null) ?? [];
  if ('tls_container_ref' in body) pool.tls_container_ref = (body.tls_container_ref as string | null) ?? null;
  if ('ca_tls_container_ref' in body)
    pool.ca_tls_container_ref = (body.ca_tls_container_ref as string | null) ?? null;
  if ('crl_container_ref' in body) pool.crl_container_ref = (body.crl_container_ref as string | null) ?? null;
  if ('tls_enabled' in body) pool.tls_enabled = (body.tls_enabled as boolean | null) ?? false;
  if ('tls_ciphers' in body) pool.tls_ciphers = (body.tls_ciphers as string | null) ?? null;
  if ('tls_versions' in body) pool.tls_versions = (body.tls_versions as string[] | null) ?? null;
  if ('alpn_protocols' in body) pool.alpn_protocols = (body.alpn_protocols as string[] | null) ?? null;
}
