/**
 * Compares a response recorded from a real OpenStack with the emulator's answer to the same call:
 * status code, the headers clients use, and the JSON shape (same keys, same value types).
 * Values are not compared: ids, addresses and timestamps differ by nature.
 */

export interface Recorded {
  request: { method: string; url: string; body?: unknown };
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Headers that clients read; when the real service sends one, the emulator must too. */
const CLIENT_HEADERS = [
  'x-subject-token',
  'openstack-api-version',
  'x-openstack-nova-api-version',
  'x-openstack-request-id',
  'x-compute-request-id',
  'location',
  'www-authenticate',
  'retry-after',
];

/**
 * Objects whose keys are data, not schema (network names in Nova's `addresses`, user metadata,
 * flavor extra specs, driver-specific binding details): only their value types are compared.
 */
const FREE_FORM_KEYS = new Set([
  'addresses',
  'metadata',
  'extra_specs',
  'properties',
  'binding:profile',
  'binding:vif_details',
  'inventories',
  'usages',
  'allocation_requests',
  'provider_summaries',
  'allocations',
  'resources',
  'capabilities',
]);

export function compareSample(recorded: Recorded, actual: Recorded): string[] {
  const problems: string[] = [];
  if (recorded.status !== actual.status) problems.push(`status ${actual.status}, real ${recorded.status}`);
  const actualHeaders = lower(actual.headers);
  const recordedHeaders = lower(recorded.headers);
  for (const h of CLIENT_HEADERS) {
    if (recordedHeaders[h] !== undefined && actualHeaders[h] === undefined)
      problems.push(`header ${h} missing`);
  }
  const rct = mediaType(recordedHeaders['content-type']);
  const act = mediaType(actualHeaders['content-type']);
  if (rct && act && rct !== act && recorded.status !== 204) problems.push(`content-type ${act}, real ${rct}`);
  if (recorded.status === actual.status) shape(recorded.body, actual.body, 'body', problems);
  return problems;
}

function shape(real: unknown, mine: unknown, path: string, out: string[]): void {
  const rt = typeOf(real);
  const mt = typeOf(mine);
  if (rt !== mt) {
    out.push(`${path}: ${mt}, real ${rt}`);
    return;
  }
  if (rt === 'array') {
    const r = real as unknown[];
    const m = mine as unknown[];
    if (r.length > 0 && m.length > 0) out.push(...closestElement(r[0], m, `${path}[0]`));
    else if (r.length > 0 && m.length === 0) out.push(`${path}: empty, real has ${r.length} item(s)`);
    return;
  }
  if (rt !== 'object') return;
  const r = real as Record<string, unknown>;
  const m = mine as Record<string, unknown>;
  const key =
    path
      .split('.')
      .pop()
      ?.replace(/\[0\]$/, '') ?? '';
  if (FREE_FORM_KEYS.has(key)) {
    const rv = Object.values(r)[0];
    const mv = Object.values(m)[0];
    if (rv !== undefined && mv !== undefined) shape(rv, mv, `${path}.*`, out);
    return;
  }
  for (const k of Object.keys(r)) {
    if (!(k in m)) out.push(`${path}.${k}: missing`);
    else shape(r[k], m[k], `${path}.${k}`, out);
  }
  for (const k of Object.keys(m)) if (!(k in r)) out.push(`${path}.${k}: not in the real response`);
}

/**
 * Lists come in id order, and ids are random on both sides: the real first item is compared with the
 * emulator's item of the most similar shape (a nullable field set on one item and not on another is
 * not a shape difference).
 */
function closestElement(real: unknown, mine: readonly unknown[], path: string): string[] {
  let best: string[] | undefined;
  for (const candidate of mine.slice(0, 50)) {
    const problems: string[] = [];
    shape(real, candidate, path, problems);
    if (!best || problems.length < best.length) best = problems;
    if (best.length === 0) break;
  }
  return best ?? [];
}

function typeOf(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return 'number';
  return typeof v;
}

function lower(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) out[k.toLowerCase()] = v;
  return out;
}

function mediaType(ct: string | undefined): string | undefined {
  return ct?.split(';')[0]?.trim().toLowerCase();
}
