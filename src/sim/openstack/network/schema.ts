/**
 * Request bodies checked the way neutron-lib's attribute maps check them: unknown attributes,
 * attributes not allowed on POST or PUT, required ones, then conversion and validation, in that
 * order and with the same messages.
 */
import { asText, httpBadRequest, invalidAttr, invalidInput, pyRepr } from './errors.ts';
import { canonicalIp, normalizeMac, parseCidr } from './ip.ts';

/** Converts and validates one attribute value; throws a SimError on bad input. */
export type Check = (value: unknown, attr: string) => unknown;

export interface Attr {
  post: boolean;
  put: boolean;
  /** Allowed on POST with no default: missing → 400. */
  required?: boolean;
  check?: Check;
}

export type AttrMap = Readonly<Record<string, Attr>>;

export type Body = Record<string, unknown>;

const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The items of a create request: one, or several with the plural key when `bulk` is allowed. */
export function parseCreate(
  body: unknown,
  resource: string,
  collection: string,
  attrs: AttrMap,
  bulk: boolean,
): { items: Body[]; bulk: boolean } {
  if (body === undefined || body === null) throw httpBadRequest('Resource body required');
  if (!isObject(body)) throw httpBadRequest('Body contains invalid data');
  if (collection in body && bulk) {
    const list = body[collection];
    if (!Array.isArray(list)) throw httpBadRequest('Body contains invalid data');
    if (list.length === 0) throw httpBadRequest('Resources required');
    const items = list.map((item) => {
      if (!isObject(item)) throw httpBadRequest('Body contains invalid data');
      const inner = resource in item ? item[resource] : item;
      return checkItem(inner, resource, attrs, true);
    });
    return { items, bulk: true };
  }
  return { items: [checkItem(body[resource], resource, attrs, true)], bulk: false };
}

export function parseUpdate(body: unknown, resource: string, attrs: AttrMap): Body {
  if (body === undefined || body === null) throw httpBadRequest('Resource body required');
  if (!isObject(body)) throw httpBadRequest('Body contains invalid data');
  return checkItem(body[resource], resource, attrs, false);
}

function checkItem(item: unknown, resource: string, attrs: AttrMap, create: boolean): Body {
  if (item === undefined || item === null)
    throw httpBadRequest(`Unable to find '${resource}' in request body`);
  if (!isObject(item)) throw httpBadRequest(`Object '${resource}' contains invalid data`);
  const unknown = Object.keys(item).filter((k) => !(k in attrs) && k !== 'tenant_id' && k !== 'project_id');
  if (unknown.length > 0) throw httpBadRequest(`Unrecognized attribute(s) '${unknown.join(', ')}'`);
  const out: Body = {};
  if (create) {
    if ('tenant_id' in item && 'project_id' in item && item.tenant_id !== item.project_id) {
      throw httpBadRequest("'project_id' and 'tenant_id' do not match");
    }
    for (const [name, a] of Object.entries(attrs)) {
      if (!a.post) {
        if (name in item) throw httpBadRequest(`Attribute '${name}' not allowed in POST`);
        continue;
      }
      if (a.required && !(name in item)) {
        throw httpBadRequest(`Failed to parse request. Required attribute '${name}' not specified`);
      }
    }
    const project = item.project_id ?? item.tenant_id;
    if (project !== undefined) out.project_id = checkString(255)(project, 'project_id');
  } else {
    for (const name of ['tenant_id', 'project_id']) {
      if (name in item) throw httpBadRequest(`Cannot update read-only attribute ${name}`);
    }
    for (const [name, a] of Object.entries(attrs)) {
      if (name in item && !a.put) throw httpBadRequest(`Cannot update read-only attribute ${name}`);
    }
  }
  for (const [name, a] of Object.entries(attrs)) {
    if (!(name in item)) continue;
    const v = item[name];
    out[name] = a.check ? a.check(v, name) : v;
  }
  return out;
}

// ---------------------------------------------------------------- converters and validators

export const anything: Check = (v) => v;

export function toBoolean(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === 0) return v === 1;
  if (typeof v === 'string') {
    const s = v.toLowerCase();
    if (s === 'true' || s === '1') return true;
    if (s === 'false' || s === '0') return false;
  }
  throw invalidInput(`'${pyRepr(v)}' cannot be converted to boolean`);
}

export const checkBoolean: Check = (v) => toBoolean(v);

export function toInt(v: unknown): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return Number(v.trim());
  throw invalidInput(`'${pyRepr(v)}' is not an integer`);
}

export function checkString(maxLen?: number): Check {
  return (v, attr) => {
    if (typeof v !== 'string') throw invalidAttr(attr, `'${pyRepr(v)}' is not a valid string`);
    if (maxLen !== undefined && v.length > maxLen)
      throw invalidAttr(attr, `'${v}' exceeds maximum length of ${maxLen}`);
    return v;
  };
}

export function nullable(inner: Check): Check {
  return (v, attr) => (v === null ? null : inner(v, attr));
}

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

export const checkUuid: Check = (v, attr) => {
  if (typeof v !== 'string' || !UUID_RE.test(v))
    throw invalidAttr(attr, `'${pyRepr(v)}' is not a valid UUID`);
  return v;
};

export function checkValues(values: readonly (string | null)[]): Check {
  return (v, attr) => {
    if (!values.includes(v as string | null)) throw invalidAttr(attr, `${pyRepr(v)} is not in valid_values`);
    return v;
  };
}

export function checkIntRange(min: number, max: number): Check {
  return (v, attr) => {
    const n = toInt(v);
    if (n < min) throw invalidAttr(attr, `'${n}' is too small - must be at least '${min}'`);
    if (n > max) throw invalidAttr(attr, `'${n}' is too large - must be no larger than '${max}'`);
    return n;
  };
}

export const checkIp: Check = (v, attr) => {
  const ip = typeof v === 'string' ? canonicalIp(v) : undefined;
  if (ip === undefined) throw invalidAttr(attr, `'${pyRepr(v)}' is not a valid IP address`);
  return ip;
};

export const checkMac: Check = (v, attr) => {
  const mac = normalizeMac(v);
  if (!mac) throw invalidAttr(attr, `'${pyRepr(v)}' is not a valid MAC address`);
  return mac;
};

/** A CIDR with host bits allowed (remote_ip_prefix, routes); a bare address is a host route. */
export const checkCidr: Check = (v, attr) => {
  if (typeof v !== 'string' || !parseCidr(v))
    throw invalidAttr(attr, `'${pyRepr(v)}' is not a valid IP subnet`);
  return v;
};

export function checkList(item: Check): Check {
  return (v, attr) => {
    if (!Array.isArray(v)) throw invalidAttr(attr, `'${pyRepr(v)}' is not a list`);
    return v.map((x) => item(x, attr));
  };
}

export const checkUuidList: Check = (v, attr) => {
  if (!Array.isArray(v)) throw invalidAttr(attr, `'${pyRepr(v)}' is not a list`);
  const list = v as unknown[];
  for (const x of list) checkUuid(x, attr);
  const dup = list.find((x, i) => list.indexOf(x) !== i);
  if (dup !== undefined) throw invalidAttr(attr, `Duplicate items in the list: '${asText(dup)}'`);
  return list;
};

export const checkDict: Check = (v, attr) => {
  if (!isObject(v)) throw invalidAttr(attr, `'${pyRepr(v)}' is not a dictionary`);
  return v;
};

export const checkStringList: Check = (v, attr) => {
  if (!Array.isArray(v)) throw invalidAttr(attr, `'${pyRepr(v)}' is not a list`);
  for (const x of v)
    if (typeof x !== 'string') throw invalidAttr(attr, `'${pyRepr(x)}' is not a valid string`);
  return v as string[];
};

/** `[{destination, nexthop}]` for host_routes and router routes. */
export const checkRoutes: Check = (v, attr) => {
  if (!Array.isArray(v)) throw invalidAttr(attr, `Invalid data format for hostroute: '${pyRepr(v)}'`);
  return v.map((r) => {
    if (!isObject(r) || typeof r.destination !== 'string' || typeof r.nexthop !== 'string') {
      throw invalidAttr(attr, `Invalid data format for hostroute: '${pyRepr(r)}'`);
    }
    const dest = parseCidr(r.destination);
    const hop = canonicalIp(r.nexthop);
    if (!dest) throw invalidAttr(attr, `'${r.destination}' is not a valid IP subnet`);
    if (!hop) throw invalidAttr(attr, `'${r.nexthop}' is not a valid IP address`);
    return { destination: r.destination, nexthop: hop };
  });
};

/** `[{subnet_id?, ip_address?}]` for fixed_ips and external_fixed_ips. */
export const checkFixedIps: Check = (v, attr) => {
  if (!Array.isArray(v)) throw invalidAttr(attr, `Invalid data format for fixed IP: '${pyRepr(v)}'`);
  const seen = new Set<string>();
  return v.map((f) => {
    if (!isObject(f)) throw invalidAttr(attr, `Invalid data format for fixed IP: '${pyRepr(f)}'`);
    const extra = Object.keys(f).filter((k) => k !== 'subnet_id' && k !== 'ip_address');
    if (extra.length > 0) throw invalidAttr(attr, `Invalid data format for fixed IP: '${pyRepr(f)}'`);
    const out: { subnet_id?: string; ip_address?: string } = {};
    if (f.subnet_id !== undefined) out.subnet_id = checkUuid(f.subnet_id, attr) as string;
    if (f.ip_address !== undefined) {
      const ip = canonicalIp(asText(f.ip_address));
      if (!ip) throw invalidAttr(attr, `'${pyRepr(f.ip_address)}' is not a valid IP address`);
      if (seen.has(ip)) throw invalidAttr(attr, `Duplicate IP address '${ip}'`);
      seen.add(ip);
      out.ip_address = ip;
    }
    return out;
  });
};
