/** Health monitors: /v2/lbaas/healthmonitors, one per pool, with Octavia's type rules per pool protocol. */
import { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { authorize, type Ctx } from './context.ts';
import { invalidOption, validation } from './errors.ts';
import { PROVISIONED_ATTRIBUTES } from './listing.ts';
import {
  HEALTH_MONITOR_TYPES,
  HTTP_METHODS,
  UDP_CONNECT_MIN_DELAY,
  newProvisioned,
  type HealthMonitorRecord,
  type PoolRecord,
} from './model.ts';
import { ProviderDriver } from './providers.ts';
import { readHandlers } from './reads.ts';
import {
  bool,
  enumOf,
  int,
  mandatory,
  numEnumOf,
  parseRoot,
  str,
  strList,
  uuidField,
  type Fields,
  type Parsed,
} from './schema.ts';
import { healthMonitorTarget, poolLocks } from './targets.ts';

const HM_MUTABLE_FIELDS: Fields = {
  name: str(),
  delay: int(0),
  timeout: int(0),
  max_retries: int(1, 10),
  max_retries_down: int(1, 10),
  http_method: enumOf(HTTP_METHODS),
  url_path: str(),
  expected_codes: str(64),
  admin_state_up: bool(),
  tags: strList(),
  http_version: numEnumOf([1.0, 1.1]),
  domain_name: str(),
};

/** The monitor of a fully-populated pool: everything but the pool. */
export const HM_GRAPH_FIELDS: Fields = {
  ...HM_MUTABLE_FIELDS,
  type: mandatory(enumOf(HEALTH_MONITOR_TYPES)),
  delay: mandatory(int(0)),
  timeout: mandatory(int(0)),
  max_retries: mandatory(int(1, 10)),
};

const HM_POST_FIELDS: Fields = {
  ...HM_GRAPH_FIELDS,
  pool_id: mandatory(uuidField()),
  project_id: str(),
  tenant_id: str(),
};

const HTTP_TYPES = ['HTTP', 'HTTPS'];
const UDP_POOL_TYPES = ['UDP-CONNECT', 'SCTP', 'TCP', 'HTTP'];

/** Octavia's type rules: what a monitor of `type` may carry, and which types a pool protocol allows. */
export function validateHealthMonitor(type: string, pool: Pick<PoolRecord, 'protocol'>, hm: Parsed): void {
  if (pool.protocol === 'UDP' || pool.protocol === 'SCTP') {
    if (!UDP_POOL_TYPES.includes(type)) {
      throw validation(
        `The associated pool protocol is ${pool.protocol}, so only a ${UDP_POOL_TYPES.join('/')} health monitor is supported.`,
      );
    }
    if (type === 'UDP-CONNECT' && typeof hm.delay === 'number' && hm.delay < UDP_CONNECT_MIN_DELAY) {
      throw validation(
        `The request delay value ${hm.delay} should be larger than ${UDP_CONNECT_MIN_DELAY} for UDP-CONNECT health monitor type.`,
      );
    }
  } else if (type === 'UDP-CONNECT' || type === 'SCTP') {
    throw validation(`The ${type} type is only supported for pools of type UDP/SCTP.`);
  }
  if (!HTTP_TYPES.includes(type)) {
    for (const field of ['http_method', 'url_path', 'expected_codes']) {
      if (hm[field]) throw invalidOption(field, `health monitors of type ${type}`);
    }
  }
}

/** (body, pool) → record; HTTP monitors get GET / 200 when not told otherwise. */
export function newHealthMonitor(hm: Parsed, pool: PoolRecord): HealthMonitorRecord {
  const type = hm.type as string;
  const http = HTTP_TYPES.includes(type);
  return {
    ...newProvisioned(hm, pool.project_id),
    pool_id: pool.id,
    type,
    delay: hm.delay as number,
    timeout: hm.timeout as number,
    max_retries: hm.max_retries as number,
    max_retries_down: (hm.max_retries_down as number | null) ?? 3,
    http_method: http ? ((hm.http_method as string | null) ?? 'GET') : null,
    url_path: http ? ((hm.url_path as string | null) ?? '/') : null,
    expected_codes: http ? ((hm.expected_codes as string | null) ?? '200') : null,
    http_version: (hm.http_version as number | null) ?? null,
    domain_name: (hm.domain_name as string | null) ?? null,
  };
}

const HM_ATTRIBUTES: Readonly<Record<string, (h: HealthMonitorRecord) => unknown>> = {
  ...PROVISIONED_ATTRIBUTES,
  name: (h) => h.name,
  type: (h) => h.type,
  delay: (h) => h.delay,
  timeout: (h) => h.timeout,
  max_retries: (h) => h.max_retries,
  max_retries_down: (h) => h.max_retries_down,
  http_method: (h) => h.http_method,
  url_path: (h) => h.url_path,
  expected_codes: (h) => h.expected_codes,
  pool_id: (h) => h.pool_id,
};

export function healthMonitorHandlers(ctx: Ctx) {
  const { store, life, views } = ctx;

  return {
    ...readHandlers({
      collection: 'healthmonitors',
      item: 'healthmonitor',
      records: store.healthmonitors,
      param: 'healthmonitor_id',
      find: (id) => store.healthmonitor(id),
      view: (h) => views.healthmonitor(h),
      attributes: HM_ATTRIBUTES,
    }),

    create: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'healthmonitor', HM_POST_FIELDS);
      const pool = store.pool(body.pool_id as string);
      const lb = store.lbOfPool(pool);
      const type = body.type as string;
      validateHealthMonitor(type, pool, body);
      authorize(req, lb.project_id);
      life.assertPoolChildWritable(pool, lb);
      if (pool.healthmonitor_id) throw new SimError(409, 'This pool already has a health monitor');
      new ProviderDriver(lb.provider).healthmonitor(type);
      const hm = newHealthMonitor(body, pool);
      store.addHealthMonitor(hm);
      life.createChild(lb, poolLocks(store, pool), 'healthmonitor', [hm]);
      return { status: 201, body: { healthmonitor: views.healthmonitor(hm) } };
    },

    update: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'healthmonitor', HM_MUTABLE_FIELDS);
      const { hm, pool, lb } = healthMonitorTarget(store, req);
      if (!HTTP_TYPES.includes(hm.type)) {
        for (const field of ['http_method', 'url_path', 'expected_codes']) {
          if (field in body) throw invalidOption(field, `health monitors of type ${hm.type}`);
        }
      }
      if (hm.type === 'UDP-CONNECT') validateHealthMonitor(hm.type, pool, body);
      life.assertPoolChildWritable(pool, lb);
      applyHealthMonitorUpdate(hm, body);
      life.updateChild(lb, poolLocks(store, pool), hm);
      return { status: 200, body: { healthmonitor: views.healthmonitor(hm) } };
    },

    remove: (req: SimRequest): SimResponse => {
      const { hm, pool, lb } = healthMonitorTarget(store, req);
      life.assertPoolChildWritable(pool, lb);
      life.deleteChild(lb, poolLocks(store, pool), hm, () => store.removeHealthMonitor(hm));
      return { status: 204 };
    },
  };
}

/** For HTTP monitors a null http_method/url_path/expected_codes keeps the current value. */
function applyHealthMonitorUpdate(hm: HealthMonitorRecord, body: Parsed): void {
  if ('name' in body) hm.name = (body.name as string | null) ?? '';
  if (typeof body.delay === 'number') hm.delay = body.delay;
  if (typeof body.timeout === 'number') hm.timeout = body.timeout;
  if (typeof body.max_retries === 'number') hm.max_retries = body.max_retries;
  if ('max_retries_down' in body) hm.max_retries_down = (body.max_retries_down as number | null) ?? 3;
  if (typeof body.http_method === 'string') hm.http_method = body.http_method;
  if (typeof body.url_path === 'string') hm.url_path = body.url_path;
  if (typeof body.expected_codes === 'string') hm.expected_codes = body.expected_codes;
  if ('admin_state_up' in body) hm.admin_state_up = (body.admin_state_up as boolean | null) ?? true;
  if ('tags' in body) hm.tags = (body.tags as string[] | null) ?? [];
  if ('http_version' in body) hm.http_version = (body.http_version as number | null) ?? null;
  if ('domain_name' in body) hm.domain_name = (body.domain_name as string | null) ?? null;
}
