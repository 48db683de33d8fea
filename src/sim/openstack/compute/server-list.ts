/**
 * GET /servers and /servers/detail: Nova's filters (regex name, status, flavor, image, ip, tags,
 * changes-since...), project scoping (admins need all_tenants for other projects), sorting
 * (newest first by default) and marker paging with `servers_links`.
 */
import { isIPv4, isIPv6 } from '../../../lib/cidr.ts';
import { SimError } from '../core/errors.ts';
import { matchesTagFilters } from '../core/query.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import type { Nova } from './context.ts';
import { UNEXPECTED_ERROR, policyForbidden } from './errors.ts';
import { auth, collectionLinks, json, limitOf, pageAfter, projectOf } from './http.ts';
import { pythonRegex } from './python-regex.ts';
import { pyRepr } from './schema.ts';
import { serverPorts } from './server-networking.ts';
import type { ServerRecord } from './server-store.ts';
import { basicView, detailView } from './server-view.ts';
import { statesForStatus } from './states.ts';

type SortValue = string | number | boolean | null;

const SORT_KEYS: Readonly<Record<string, (s: ServerRecord) => SortValue>> = {
  access_ip_v4: (s) => s.access_ip_v4,
  access_ip_v6: (s) => s.access_ip_v6,
  availability_zone: (s) => s.availability_zone,
  config_drive: (s) => s.config_drive,
  created_at: (s) => s.created_at,
  display_description: (s) => s.description,
  display_name: (s) => s.name,
  host: (s) => s.host,
  hostname: (s) => s.hostname,
  image_ref: (s) => s.image_ref,
  instance_type_id: (s) => s.flavor.id,
  kernel_id: () => '',
  key_name: (s) => s.key_name,
  launch_index: (s) => s.launch_index,
  launched_at: (s) => s.launched_at,
  locked: (s) => s.locked_by !== null,
  locked_by: (s) => s.locked_by,
  node: (s) => s.host,
  power_state: (s) => s.power_state,
  progress: () => 0,
  project_id: (s) => s.project_id,
  ramdisk_id: () => '',
  root_device_name: (s) => s.root_device_name,
  task_state: (s) => s.task_state,
  terminated_at: () => null,
  updated_at: (s) => s.updated_at,
  user_id: (s) => s.user_id,
  uuid: (s) => s.id,
  vm_mode: () => null,
  vm_state: (s) => s.vm_state,
};

function compare(a: SortValue, b: SortValue): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

const boolParam = (v: string): boolean | undefined => {
  const low = v.toLowerCase();
  if (['', 'true', '1', 'on', 'yes', 't', 'y'].includes(low)) return true;
  if (['false', '0', 'off', 'no', 'f', 'n'].includes(low)) return false;
  return undefined;
};

function dateParam(req: SimRequest, key: string): number | undefined {
  const raw = req.query.get(key);
  if (raw === null) return undefined;
  const t = Date.parse(raw);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}/.test(raw)) {
    throw new SimError(
      400,
      `Invalid input for query parameters ${key}. Value: ${raw}. ${pyRepr(raw)} is not a 'date-time'`,
    );
  }
  return t;
}

function ipMatcher(raw: string | null): RegExp | undefined {
  if (raw === null) return undefined;
  const re = pythonRegex(raw, true);
  if (!re) throw new SimError(500, UNEXPECTED_ERROR);
  return re;
}

export function listServers(nova: Nova, req: SimRequest, detailed: boolean): SimResponse {
  const { mv, cloud } = nova;
  const a = auth(req);
  const q = req.query;
  const project = projectOf(req);

  const allTenantsRaw = q.get('all_tenants');
  let allTenants = false;
  if (allTenantsRaw !== null) {
    const b = boolParam(allTenantsRaw);
    if (b === undefined) throw new SimError(400, `Invalid value '${allTenantsRaw}' for all_tenants`);
    allTenants = b;
  }
  if (allTenants && !a.isAdmin) {
    throw policyForbidden(`os_compute_api:servers:${detailed ? 'detail' : 'index'}:get_all_tenants`);
  }
  // Without all_tenants every caller sees its own project only; tenant_id/project_id only narrow all_tenants.
  const projectFilter = allTenants ? (q.get('project_id') ?? q.get('tenant_id') ?? undefined) : project;

  let vmStates: Set<string> | undefined;
  let taskStates: Set<string | null> | undefined;
  const statuses = q.getAll('status');
  if (statuses.length > 0) {
    vmStates = new Set();
    const tasks = new Set<string | null>();
    let anyTask = false;
    for (const st of statuses) {
      const r = statesForStatus(st);
      r.vmStates.forEach((v) => vmStates!.add(v));
      if (r.taskStates === undefined) anyTask = true;
      else r.taskStates.forEach((tk) => tasks.add(tk));
    }
    if (vmStates.size === 0) {
      if (mv.atLeast(req, '2.38')) throw new SimError(400, 'Invalid status value');
      return json(200, { servers: [] });
    }
    taskStates = anyTask ? undefined : tasks;
  }
  // Deleted servers are not kept, so asking for them finds none.
  if (a.isAdmin && boolParam(q.get('deleted') ?? 'false') === true) return json(200, { servers: [] });

  const nameRaw = q.get('name') ?? q.get('display_name');
  const nameRe = nameRaw === null ? undefined : pythonRegex(nameRaw);
  if (nameRaw !== null && !nameRe) throw new SimError(500, UNEXPECTED_ERROR);
  const flavor = q.get('flavor');
  const image = q.get('image')?.split('/').pop();
  const since = dateParam(req, 'changes-since');
  const before = mv.atLeast(req, '2.66') ? dateParam(req, 'changes-before') : undefined;
  if (since !== undefined && before !== undefined && since > before) {
    throw new SimError(400, 'The value of changes-since must be less than or equal to changes-before.');
  }
  const ip = ipMatcher(q.get('ip'));
  const ip6 = mv.atLeast(req, '2.5') ? ipMatcher(q.get('ip6')) : undefined;
  const tagFilters = mv.atLeast(req, '2.26');
  const keyName = q.get('key_name');
  const reservation = q.get('reservation_id');
  const az = q.get('availability_zone');
  const locked =
    mv.atLeast(req, '2.73') && q.get('locked') !== null ? boolParam(q.get('locked')!) : undefined;
  const host = a.isAdmin ? (q.get('host') ?? q.get('node')) : null;
  const user = a.isAdmin || mv.atLeast(req, '2.83') ? q.get('user_id') : null;
  const hostname = q.get('hostname');

  const matches = (s: ServerRecord): boolean => {
    if (projectFilter !== undefined && s.project_id !== projectFilter) return false;
    if (vmStates && !vmStates.has(s.vm_state)) return false;
    if (taskStates && !taskStates.has(s.task_state)) return false;
    if (nameRe && !nameRe.test(s.name)) return false;
    if (flavor !== null && s.flavor.id !== flavor) return false;
    if (image !== undefined && s.image_ref !== image) return false;
    const updated = Date.parse(s.updated_at);
    if (since !== undefined && updated < since) return false;
    if (before !== undefined && updated > before) return false;
    if (tagFilters && !matchesTagFilters(s.tags, q)) return false;
    if (keyName !== null && s.key_name !== keyName) return false;
    if (reservation !== null && s.reservation_id !== reservation) return false;
    if (az !== null && (s.availability_zone ?? '') !== az) return false;
    if (locked !== undefined && (s.locked_by !== null) !== locked) return false;
    if (host !== null && s.host !== host) return false;
    if (user !== null && s.user_id !== user) return false;
    if (hostname !== null && s.hostname !== hostname) return false;
    if (ip || ip6) {
      const addrs = serverPorts(cloud.network, s).flatMap((p) => p.fixed_ips.map((f) => f.ip_address));
      if (ip && !addrs.some((x) => isIPv4(x) && ip.test(x))) return false;
      if (ip6 && !addrs.some((x) => isIPv6(x) && ip6.test(x))) return false;
    }
    return true;
  };

  const sortKeys = q.getAll('sort_key');
  const sortDirs = q.getAll('sort_dir');
  for (const k of sortKeys) {
    if (!SORT_KEYS[k]) {
      throw new SimError(
        400,
        `Invalid input for query parameters sort_key. Value: ${k}. ${pyRepr(k)} is not one of ${pyRepr(Object.keys(SORT_KEYS))}`,
      );
    }
  }
  for (const d of sortDirs) {
    if (d !== 'asc' && d !== 'desc') {
      throw new SimError(
        400,
        `Invalid input for query parameters sort_dir. Value: ${d}. ${pyRepr(d)} is not one of ['asc', 'desc']`,
      );
    }
  }

  // Creation order reversed is Nova's default (created_at desc, then the internal id desc).
  let items = [...nova.servers.byId.values()].reverse().filter(matches);
  if (sortKeys.length > 0) {
    const keys = sortKeys.map((k, i) => ({
      get: SORT_KEYS[k]!,
      sign: (sortDirs[i] ?? 'desc') === 'asc' ? 1 : -1,
    }));
    items.sort((x, y) => {
      for (const k of keys) {
        const c = compare(k.get(x), k.get(y));
        if (c !== 0) return k.sign * c;
      }
      return y.instance_number - x.instance_number;
    });
  }
  items = pageAfter(items, (s) => s.id, q.get('marker'), limitOf(req));
  const out: Record<string, unknown> = {
    servers: items.map((s) => (detailed ? detailView(nova, req, s) : basicView(req, s))),
  };
  const next = collectionLinks(req, detailed ? 'servers/detail' : 'servers', items.length, items.at(-1)?.id);
  if (next.length > 0) out['servers_links'] = next;
  return json(200, out);
}
