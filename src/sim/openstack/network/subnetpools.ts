/**
 * Subnet pools (the subnet_allocation extension): prefixes subnets are carved from, read and checked
 * as neutron's SubnetPoolReader does, and the prefix allocation of its SubnetAllocator — the smallest
 * free block that fits, lowest address first — with neutron-lib's exceptions and messages.
 */
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import { canSeeOwned, checkAttributePolicy, requireOwner } from './access.ts';
import { badRequest, invalidInput } from './errors.ts';
import { bitsOf, formatCidr, parseCidr, type Cidr, type IpVersion } from './ip.ts';
import type { SubnetPoolRecord } from './records.ts';
import {
  checkBoolean,
  checkCidr,
  checkIntRange,
  checkList,
  checkString,
  checkUuid,
  nullable,
  type AttrMap,
  type Body,
} from './schema.ts';
import type { Actor, NeutronState } from './state.ts';

const readOnly = { post: false, put: false };
const prefixlen = checkIntRange(0, 128);

export const SUBNETPOOL_ATTRS: AttrMap = {
  id: readOnly,
  name: { post: true, put: true, check: checkString(255) },
  prefixes: { post: true, put: true, required: true, check: checkList(checkCidr) },
  default_prefixlen: { post: true, put: true, check: prefixlen },
  min_prefixlen: { post: true, put: true, check: prefixlen },
  max_prefixlen: { post: true, put: true, check: prefixlen },
  default_quota: { post: true, put: true, check: nullable(checkIntRange(0, Number.MAX_SAFE_INTEGER)) },
  is_default: { post: true, put: true, check: checkBoolean },
  shared: { post: true, put: false, check: checkBoolean },
  address_scope_id: { post: true, put: true, check: nullable(checkUuid) },
  description: { post: true, put: true, check: checkString(255) },
  ip_version: readOnly,
  tags: readOnly,
  created_at: readOnly,
  updated_at: readOnly,
  revision_number: readOnly,
};

const err = (status: number, type: string, message: string) => new SimError(status, message, { type });

export const subnetPoolNotFound = (id: string) =>
  err(404, 'SubnetPoolNotFound', `Subnet pool ${id} could not be found.`);

const bounds = (type: string, len: number, base: string, baseLen: number) =>
  err(400, 'IllegalSubnetPoolPrefixBounds', `Illegal prefix bounds: ${type}=${len}, ${base}=${baseLen}.`);

/** Neutron's SubnetAllocationError is a bare NeutronException: a 500 naming the reason. */
const allocationError = (reason: string) =>
  err(500, 'SubnetAllocationError', `Failed to allocate subnet: ${reason}.`);

// ------------------------------------------------------------------ prefix sets

interface Range {
  start: bigint;
  end: bigint;
}

/** Sorted, merged ranges of a set of CIDRs (netaddr.IPSet). */
function toRanges(cidrs: readonly Cidr[]): Range[] {
  const sorted = cidrs
    .map((c) => ({ start: c.network, end: c.last }))
    .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end + 1n) {
      if (r.end > last.end) last.end = r.end;
    } else out.push({ ...r });
  }
  return out;
}

function subtract(ranges: readonly Range[], holes: readonly Range[]): Range[] {
  let out = ranges.map((r) => ({ ...r }));
  for (const h of holes) {
    const next: Range[] = [];
    for (const r of out) {
      if (h.end < r.start || h.start > r.end) {
        next.push(r);
        continue;
      }
      if (h.start > r.start) next.push({ start: r.start, end: h.start - 1n });
      if (h.end < r.end) next.push({ start: h.end + 1n, end: r.end });
    }
    out = next;
  }
  return out;
}

/** The largest aligned CIDRs covering a range, lowest address first (netaddr.iter_cidrs). */
function rangeToCidrs(version: IpVersion, r: Range): Cidr[] {
  const bits = bitsOf(version);
  const out: Cidr[] = [];
  let start = r.start;
  while (start <= r.end) {
    let len = bits;
    while (len > 0) {
      const size = 1n << BigInt(bits - len + 1);
      if (start % size !== 0n || start + size - 1n > r.end) break;
      len--;
    }
    const last = start + (1n << BigInt(bits - len)) - 1n;
    out.push({ version, network: start, prefixlen: len, last });
    start = last + 1n;
  }
  return out;
}

function cidrsOf(version: IpVersion, ranges: readonly Range[]): Cidr[] {
  return ranges.flatMap((r) => rangeToCidrs(version, r));
}

const parsed = (texts: readonly string[]): Cidr[] => texts.map((t) => parseCidr(t)!);

// ------------------------------------------------------------------ reading a pool

interface PoolShape {
  ip_version: IpVersion;
  prefixes: string[];
  min_prefixlen: number;
  max_prefixlen: number;
  default_prefixlen: number;
}

/** SubnetPoolReader: the prefixes compacted, the family inferred, the bounds defaulted and checked. */
function readPool(
  prefixes: readonly string[],
  given: { min?: number | undefined; max?: number | undefined; dflt?: number | undefined },
): PoolShape {
  if (prefixes.length === 0) throw err(400, 'EmptySubnetPoolPrefixList', 'Empty subnet pool prefix list.');
  const cidrs = parsed(prefixes);
  const version = cidrs[0]!.version;
  if (cidrs.some((c) => c.version !== version)) {
    throw err(400, 'PrefixVersionMismatch', 'Cannot mix IPv4 and IPv6 prefixes in a subnet pool.');
  }
  const bits = bitsOf(version);
  const min = given.min ?? (version === 4 ? 8 : 64);
  const max = given.max ?? bits;
  const dflt = given.dflt ?? min;
  if (min > max) throw bounds('min_prefixlen', min, 'max_prefixlen', max);
  if (max > bits) throw bounds('max_prefixlen', max, 'ip_version_max', bits);
  if (dflt < min) throw bounds('default_prefixlen', dflt, 'min_prefixlen', min);
  if (dflt > max) throw bounds('default_prefixlen', dflt, 'max_prefixlen', max);
  return {
    ip_version: version,
    prefixes: cidrsOf(version, toRanges(cidrs)).map(formatCidr),
    min_prefixlen: min,
    max_prefixlen: max,
    default_prefixlen: dflt,
  };
}

function checkDefaultUnique(state: NeutronState, version: IpVersion, except?: string): void {
  for (const p of state.subnetPools.values()) {
    if (p.is_default && p.ip_version === version && p.id !== except) {
      throw invalidInput(
        'A default subnetpool for this IP family has already been set. Only one default may exist per IP family',
      );
    }
  }
}

/** The emulator has no address scopes: only null associates. */
function checkAddressScope(id: unknown): void {
  if (typeof id === 'string') {
    throw err(404, 'AddressScopeNotFound', `Address scope ${id} could not be found.`);
  }
}

export function canSeeSubnetPool(a: Actor, p: SubnetPoolRecord): boolean {
  return canSeeOwned(a, p) || p.shared;
}

export function getSubnetPool(state: NeutronState, a: Actor, id: string): SubnetPoolRecord {
  const p = state.subnetPools.get(id);
  if (!p || !canSeeSubnetPool(a, p)) throw subnetPoolNotFound(id);
  return p;
}

export function createSubnetPool(state: NeutronState, actor: Actor, body: Body): SubnetPoolRecord {
  checkAttributePolicy(actor.isAdmin, 'create_subnetpool', body, ['shared', 'is_default']);
  const project = state.ownerFor(actor, body.project_id, 'create_subnetpool');
  const shape = readPool(body.prefixes as string[], {
    min: body.min_prefixlen as number | undefined,
    max: body.max_prefixlen as number | undefined,
    dflt: body.default_prefixlen as number | undefined,
  });
  const isDefault = (body.is_default as boolean | undefined) ?? false;
  if (isDefault) checkDefaultUnique(state, shape.ip_version);
  checkAddressScope(body.address_scope_id);
  state.checkQuota('subnetpool', project);
  const pool: SubnetPoolRecord = {
    ...state.standard(uuid(), project, (body.description as string | undefined) ?? ''),
    name: (body.name as string | undefined) ?? '',
    ...shape,
    is_default: isDefault,
    shared: (body.shared as boolean | undefined) ?? false,
    default_quota: (body.default_quota as number | null | undefined) ?? null,
    address_scope_id: null,
  };
  state.subnetPools.insert(pool);
  state.changed();
  return pool;
}

export function updateSubnetPool(
  state: NeutronState,
  actor: Actor,
  id: string,
  body: Body,
  ifMatch?: string,
): SubnetPoolRecord {
  const pool = getSubnetPool(state, actor, id);
  requireOwner(actor, pool, 'update_subnetpool');
  checkAttributePolicy(actor.isAdmin, 'update_subnetpool', body, ['is_default']);
  state.checkRevision(pool, ifMatch);
  let prefixes = pool.prefixes;
  if (body.prefixes !== undefined) {
    const next = toRanges(parsed(body.prefixes as string[]));
    const old = toRanges(parsed(pool.prefixes));
    if (subtract(old, next).length > 0) {
      throw err(
        400,
        'IllegalSubnetPoolPrefixUpdate',
        'Illegal update to prefixes: Existing prefixes must be a subset of the new prefixes.',
      );
    }
    prefixes = body.prefixes as string[];
  }
  const shape = readPool(prefixes, {
    min: (body.min_prefixlen as number | undefined) ?? pool.min_prefixlen,
    max: (body.max_prefixlen as number | undefined) ?? pool.max_prefixlen,
    dflt: (body.default_prefixlen as number | undefined) ?? pool.default_prefixlen,
  });
  if (body.is_default === true && !pool.is_default) checkDefaultUnique(state, shape.ip_version, pool.id);
  checkAddressScope(body.address_scope_id);
  Object.assign(pool, shape);
  for (const k of ['name', 'description', 'default_quota', 'is_default'] as const) {
    if (body[k] !== undefined) (pool as unknown as Record<string, unknown>)[k] = body[k];
  }
  state.bump(pool);
  state.changed();
  return pool;
}

export function deleteSubnetPool(state: NeutronState, actor: Actor, id: string, ifMatch?: string): void {
  const pool = getSubnetPool(state, actor, id);
  requireOwner(actor, pool, 'delete_subnetpool');
  state.checkRevision(pool, ifMatch);
  for (const s of state.subnets.values()) {
    if (s.subnetpool_id === pool.id) {
      throw err(
        400,
        'SubnetPoolDeleteError',
        'Unable to delete subnet pool: Subnet pool has existing allocations.',
      );
    }
  }
  state.subnetPools.remove(pool.id);
  state.changed();
}

// ------------------------------------------------------------------ allocation

/** The pool of a subnet create: `subnetpool_id`, or the family's default with `use_default_subnetpool`. */
export function poolForSubnet(state: NeutronState, actor: Actor, body: Body): SubnetPoolRecord | undefined {
  const useDefault = body.use_default_subnetpool === true;
  const id = body.subnetpool_id as string | null | undefined;
  if (useDefault && id) {
    throw badRequest('subnets', 'subnetpool_id and use_default_subnetpool cannot both be specified');
  }
  if (id) return getSubnetPool(state, actor, id);
  if (!useDefault) return undefined;
  const cidr = typeof body.cidr === 'string' ? parseCidr(body.cidr) : undefined;
  const version = cidr?.version ?? (body.ip_version as number);
  for (const p of state.subnetPools.sorted) {
    if (p.is_default && p.ip_version === version && canSeeSubnetPool(actor, p)) return p;
  }
  throw badRequest('subnets', `No default subnetpool found for IPv${version}`);
}

/**
 * The CIDR a subnet gets from `pool`: the requested one if it lies in free prefix space, else the
 * first block of `prefixlen` (the pool's default when not given) from the smallest free prefix
 * that holds it.
 */
export function allocateFromPool(
  state: NeutronState,
  pool: SubnetPoolRecord,
  projectId: string,
  request: { cidr?: Cidr | undefined; prefixlen?: number | undefined },
): Cidr {
  const len = request.cidr?.prefixlen ?? request.prefixlen ?? pool.default_prefixlen;
  if (len > pool.max_prefixlen) {
    throw err(
      400,
      'MaxPrefixSubnetAllocationError',
      `Unable to allocate subnet with prefix length ${len}, maximum allowed prefix is ${pool.max_prefixlen}.`,
    );
  }
  if (len < pool.min_prefixlen) {
    throw err(
      400,
      'MinPrefixSubnetAllocationError',
      `Unable to allocate subnet with prefix length ${len}, minimum allowed prefix is ${pool.min_prefixlen}.`,
    );
  }
  const allocated: Cidr[] = [];
  for (const s of state.subnets.values()) if (s.subnetpool_id === pool.id) allocated.push(parseCidr(s.cidr)!);
  checkPoolQuota(state, pool, projectId, len);
  const free = cidrsOf(pool.ip_version, subtract(toRanges(parsed(pool.prefixes)), toRanges(allocated)));
  const wanted = request.cidr;
  if (wanted) {
    const holder = free.find((f) => wanted.network >= f.network && wanted.last <= f.last);
    if (!holder) throw allocationError('Cannot allocate requested subnet from the available set of prefixes');
    return wanted;
  }
  // Smallest blocks first (a stable sort keeps address order within a size), so big blocks stay whole.
  const bySize = [...free].sort((a, b) => b.prefixlen - a.prefixlen);
  const block = bySize.find((f) => f.prefixlen <= len);
  if (!block) throw allocationError(`Insufficient prefix space to allocate subnet size /${len}`);
  const last = block.network + (1n << BigInt(bitsOf(pool.ip_version) - len)) - 1n;
  return { version: pool.ip_version, network: block.network, prefixlen: len, last };
}

/** `default_quota` counts /32s (IPv4) or /64s (IPv6) of the project's subnets from the pool. */
function checkPoolQuota(state: NeutronState, pool: SubnetPoolRecord, projectId: string, len: number): void {
  if (pool.default_quota === null || pool.default_quota === 0) return;
  const unit = pool.ip_version === 4 ? 32 : 64;
  const units = (prefix: number) => 2 ** Math.max(0, unit - prefix);
  let used = 0;
  for (const s of state.subnets.values()) {
    if (s.subnetpool_id === pool.id && s.project_id === projectId)
      used += units(parseCidr(s.cidr)!.prefixlen);
  }
  if (used + units(len) > pool.default_quota) {
    throw err(409, 'SubnetPoolQuotaExceeded', 'Per-tenant subnet pool prefix quota exceeded.');
  }
}
