import { z } from 'zod';
import type { EmulatedCloud } from './cloud.ts';
import type { SimResponse } from './types.ts';

const serviceName = z.enum(['keystone', 'nova', 'neutron', 'octavia', 'glance', 'cinder', 'placement']);

const faultSpec = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('request'),
    service: serviceName.optional(),
    operation: z.string().optional(),
    path: z.string().optional(),
    status: z.number().int().min(400).max(599),
    message: z.string().optional(),
    retryAfterSeconds: z.number().int().min(0).optional(),
    rate: z.number().min(0).max(1).optional(),
    times: z.number().int().min(1).optional(),
    durationMs: z.number().int().min(1).optional(),
  }),
  z.strictObject({
    kind: z.enum(['error-on-create', 'stuck', 'ip-conflict']),
    service: serviceName,
    resource: z.string(),
    target: z.string().optional(),
    times: z.number().int().min(1).optional(),
  }),
]);

const profilePatch = z.strictObject({
  timeScale: z.number().min(0).optional(),
  transitions: z.record(z.string(), z.number().min(0)).optional(),
  latency: z.record(z.string(), z.number().min(0)).optional(),
});

const json = (status: number, body: unknown): SimResponse => ({ status, body });
const optional = <K extends string>(key: K, value: string | null): Partial<Record<K, string>> =>
  (value === null ? {} : { [key]: value }) as Partial<Record<K, string>>;
const problem = (status: number, message: string): SimResponse =>
  json(status, { error: { code: status, message } });

/**
 * The emulator's own admin API under /_sim (no token: it only ever listens on loopback).
 *
 *   GET    /_sim/stats                    request counts and latency per service and operation
 *   DELETE /_sim/stats                    reset them
 *   GET    /_sim/requests?since=&writes=&service=&caller=   the journal of requests with their
 *                                         User-Agent (caller), after the seq `since`
 *   GET    /_sim/statuses?since=&service=   when each server, volume, port and load balancer reached each status
 *                                         (ms), after the seq `since`
 *   GET    /_sim/faults                   active faults
 *   POST   /_sim/faults                   add one (see FaultSpec)
 *   DELETE /_sim/faults[/{id}]            remove all, or one
 *   POST   /_sim/tokens/expire            every issued token answers 401 from now on
 *   GET    /_sim/profile, PATCH /_sim/profile   delays and time scale
 *   POST   /_sim/state/{service}/{resource}/{id}   force fields, e.g. {"provisioning_status":"ERROR"}
 *   GET    /_sim/snapshot                 the whole state, as the state file holds it
 */
export function handleAdmin(cloud: EmulatedCloud, method: string, url: URL, raw: Buffer): SimResponse {
  const parts = url.pathname.split('/').filter(Boolean).slice(1);
  let body: unknown;
  if (raw.length > 0) {
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return problem(400, 'body is not valid JSON');
    }
  }
  const [head, a, b, c] = parts;
  switch (`${method} ${head ?? ''}`) {
    case 'GET stats':
      return json(200, cloud.stats.snapshot());
    case 'DELETE stats':
      cloud.stats.reset();
      return { status: 204 };
    case 'GET requests': {
      const since = Number(url.searchParams.get('since') ?? '0');
      if (!Number.isInteger(since) || since < 0)
        return problem(400, 'since: write the seq of the last request you read (0 for the oldest kept)');
      const writes = url.searchParams.get('writes');
      return json(
        200,
        cloud.stats.requests(since, {
          ...(writes === null ? {} : { writes: writes === 'true' }),
          ...optional('service', url.searchParams.get('service')),
          ...optional('caller', url.searchParams.get('caller')),
        }),
      );
    }
    case 'GET statuses': {
      const since = Number(url.searchParams.get('since') ?? '0');
      if (!Number.isInteger(since) || since < 0)
        return problem(400, 'since: write the seq of the last status you read (0 for the oldest kept)');
      return json(200, cloud.statuses.since(since, optional('service', url.searchParams.get('service'))));
    }
    case 'GET faults':
      return json(200, { faults: cloud.faults.list() });
    case 'POST faults': {
      const parsed = faultSpec.safeParse(body);
      if (!parsed.success) return problem(400, `invalid fault: ${z.prettifyError(parsed.error)}`);
      try {
        return json(201, { fault: cloud.faults.add(parsed.data) });
      } catch (err) {
        return problem(400, `invalid fault: path is not a regular expression: ${(err as Error).message}`);
      }
    }
    case 'DELETE faults':
      if (a) return cloud.faults.remove(a) ? { status: 204 } : problem(404, `no fault ${a}`);
      cloud.faults.clear();
      return { status: 204 };
    case 'POST tokens':
      if (a !== 'expire') break;
      cloud.identity.expireAllTokens();
      return { status: 204 };
    case 'GET profile':
      return json(200, { profile: cloud.timing.profile });
    case 'PATCH profile': {
      const parsed = profilePatch.safeParse(body);
      if (!parsed.success) return problem(400, `invalid profile: ${z.prettifyError(parsed.error)}`);
      const p = cloud.timing.profile;
      cloud.timing.profile = {
        ...p,
        timeScale: parsed.data.timeScale ?? p.timeScale,
        transitions: { ...p.transitions, ...parsed.data.transitions },
        latency: { ...p.latency, ...parsed.data.latency },
      };
      return json(200, { profile: cloud.timing.profile });
    }
    case 'POST state': {
      if (!a || !b || !c || typeof body !== 'object' || body === null) {
        return problem(400, 'use POST /_sim/state/{service}/{resource}/{id} with a JSON object of fields');
      }
      return cloud.forceState(a, b, c, body as Record<string, unknown>)
        ? { status: 204 }
        : problem(404, `no ${b} ${c} in ${a}, or ${a} cannot force its state`);
    }
    case 'GET snapshot':
      return json(200, cloud.snapshot());
  }
  return problem(
    404,
    `unknown admin call ${method} ${url.pathname}; see GET /_sim/stats, /_sim/requests, /_sim/faults, /_sim/profile`,
  );
}
