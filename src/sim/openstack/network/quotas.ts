/** Quotas (quotas and quota_details extensions) and network IP availability, both read from live counts. */
import { SimError } from '../core/errors.ts';
import type { SimResponse } from '../core/types.ts';
import { getNetwork } from './access.ts';
import { httpBadRequest, invalidAttr, policyNotAuthorized } from './errors.ts';
import type { NetworkRecord, QuotaLimits } from './records.ts';
import { toInt } from './schema.ts';
import { DEFAULT_QUOTAS, type Actor, type NeutronState, type QuotaResource } from './state.ts';

const RESOURCES = Object.keys(DEFAULT_QUOTAS) as QuotaResource[];

function requireSelfOrAdmin(actor: Actor, projectId: string): void {
  if (!actor.isAdmin && actor.projectId !== projectId) throw policyNotAuthorized('rule:get_quota');
}

export function listQuotas(state: NeutronState, actor: Actor): SimResponse {
  if (!actor.isAdmin) throw policyNotAuthorized('rule:get_quota');
  const quotas = [...state.quotas.keys()].map((pid) => ({
    ...state.quotaFor(pid),
    project_id: pid,
    tenant_id: pid,
  }));
  return { status: 200, body: { quotas } };
}

export function showQuota(state: NeutronState, actor: Actor, projectId: string): SimResponse {
  requireSelfOrAdmin(actor, projectId);
  return { status: 200, body: { quota: state.quotaFor(projectId) } };
}

export function defaultQuota(actor: Actor, projectId: string): SimResponse {
  requireSelfOrAdmin(actor, projectId);
  return { status: 200, body: { quota: { ...DEFAULT_QUOTAS } } };
}

export function quotaDetails(state: NeutronState, actor: Actor, projectId: string): SimResponse {
  requireSelfOrAdmin(actor, projectId);
  const limits = state.quotaFor(projectId);
  const used = state.usage(projectId);
  const quota = Object.fromEntries(
    RESOURCES.map((r) => [r, { limit: limits[r], used: used[r], reserved: 0 }]),
  );
  return { status: 200, body: { quota } };
}

/** The project of the caller's token (`GET /v2.0/quotas/tenant`). */
export function callerProject(actor: Actor): SimResponse {
  return { status: 200, body: { tenant: { tenant_id: actor.projectId } } };
}

export function updateQuota(
  state: NeutronState,
  actor: Actor,
  projectId: string,
  body: unknown,
): SimResponse {
  if (!actor.isAdmin) throw policyNotAuthorized('rule:update_quota');
  if (typeof body !== 'object' || body === null || typeof (body as { quota?: unknown }).quota !== 'object') {
    throw httpBadRequest("Unable to find 'quota' in request body");
  }
  const input = (body as { quota: Record<string, unknown> }).quota;
  const unknown = Object.keys(input).filter(
    (k) => !(RESOURCES as string[]).includes(k) && k !== 'force' && k !== 'check_limit',
  );
  if (unknown.length > 0) throw httpBadRequest(`Unrecognized attribute(s) '${unknown.join(', ')}'`);
  const next: Partial<QuotaLimits> = { ...state.quotas.get(projectId) };
  const used = state.usage(projectId);
  for (const r of RESOURCES) {
    if (input[r] === undefined) continue;
    const n = toInt(input[r]);
    if (n < -1) throw invalidAttr(r, `'${n}' is too small - must be at least '-1'`);
    if (input.check_limit === true && n >= 0 && n < used[r]) {
      throw new SimError(
        400,
        `Quota limit ${n} for ${r} must be greater than or equal to already used and reserved ${used[r]}.`,
        {
          type: 'InvalidQuotaValue',
        },
      );
    }
    next[r] = n;
  }
  state.quotas.set(projectId, next);
  state.changed();
  return { status: 200, body: { quota: state.quotaFor(projectId) } };
}

export function resetQuota(state: NeutronState, actor: Actor, projectId: string): SimResponse {
  if (!actor.isAdmin) throw policyNotAuthorized('rule:delete_quota');
  state.quotas.delete(projectId);
  state.changed();
  return { status: 204 };
}

// ---------------------------------------------------------------- network-ip-availabilities

function availability(state: NeutronState, net: NetworkRecord) {
  let total = 0;
  let used = 0;
  const subnets = net.subnets.flatMap((sid) => {
    const s = state.subnets.get(sid);
    const alloc = state.allocators.get(sid);
    if (!s || !alloc) return [];
    const t = Number(alloc.poolSize);
    const u = alloc.usedInPools;
    total += t;
    used += u;
    return [
      {
        subnet_id: s.id,
        ip_version: s.ip_version,
        cidr: s.cidr,
        subnet_name: s.name,
        used_ips: u,
        total_ips: t,
      },
    ];
  });
  return {
    network_id: net.id,
    network_name: net.name,
    tenant_id: net.project_id,
    project_id: net.project_id,
    total_ips: total,
    used_ips: used,
    subnet_ip_availability: subnets,
  };
}

export function listIpAvailability(state: NeutronState, actor: Actor, query: URLSearchParams): SimResponse {
  if (!actor.isAdmin) throw policyNotAuthorized('rule:get_network_ip_availability');
  const ids = new Set(query.getAll('network_id'));
  const names = new Set(query.getAll('network_name'));
  const out = [];
  for (const net of state.networks.sorted) {
    if (ids.size > 0 && !ids.has(net.id)) continue;
    if (names.size > 0 && !names.has(net.name)) continue;
    out.push(availability(state, net));
  }
  return { status: 200, body: { network_ip_availabilities: out } };
}

export function showIpAvailability(state: NeutronState, actor: Actor, id: string): SimResponse {
  if (!actor.isAdmin) throw policyNotAuthorized('rule:get_network_ip_availability');
  return {
    status: 200,
    body: { network_ip_availability: availability(state, getNetwork(state, actor, id)) },
  };
}
