/**
 * Nova microversion negotiation: `OpenStack-API-Version: compute 2.x` (or the legacy
 * `X-OpenStack-Nova-API-Version: 2.x`), `latest`, and 2.1 when neither is sent. The negotiated
 * version is remembered per request and echoed on the response, as nova's wsgi.Resource does.
 */
import { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';

export interface ApiVersion {
  major: number;
  minor: number;
}

export const MIN_VERSION: ApiVersion = { major: 2, minor: 1 };
export const MAX_VERSION: ApiVersion = { major: 2, minor: 93 };

export const versionString = (v: ApiVersion): string => `${v.major}.${v.minor}`;

function compare(a: ApiVersion, b: ApiVersion): number {
  return a.major === b.major ? a.minor - b.minor : a.major - b.major;
}

function headerValue(req: SimRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** The compute entry of `OpenStack-API-Version` (comma-separated `service version` pairs), else the legacy header. */
function requestedVersion(req: SimRequest): string | undefined {
  const standard = headerValue(req, 'openstack-api-version');
  if (standard !== undefined) {
    for (const item of standard.split(',')) {
      const [service, version] = item.trim().split(/\s+/, 2);
      if (service?.toLowerCase() === 'compute' && version !== undefined) return version;
    }
  }
  const legacy = headerValue(req, 'x-openstack-nova-api-version');
  return legacy?.trim() || undefined;
}

function parse(text: string): ApiVersion | undefined {
  const m = /^([1-9]\d*)\.([1-9]\d*|0)$/.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

/** Per-request negotiated versions; requests that never reached negotiation carry none (no headers echoed). */
export class Microversions {
  private readonly versions = new WeakMap<SimRequest, ApiVersion>();

  /** Runs before the handler: 400 for a malformed version, 406 outside 2.1–2.93. */
  negotiate(req: SimRequest): void {
    const text = requestedVersion(req);
    if (text === undefined) {
      this.versions.set(req, MIN_VERSION);
      return;
    }
    if (text.toLowerCase() === 'latest') {
      this.versions.set(req, MAX_VERSION);
      return;
    }
    const v = parse(text);
    if (!v) {
      throw new SimError(
        400,
        `API Version String ${text} is of invalid format. Must be of format MajorNum.MinorNum.`,
      );
    }
    // The rejected version is still echoed, as nova's Fault does with the request's version.
    this.versions.set(req, v);
    if (compare(v, MIN_VERSION) < 0 || compare(v, MAX_VERSION) > 0) {
      throw new SimError(
        406,
        `Version ${versionString(v)} is not supported by the API. Minimum is ${versionString(MIN_VERSION)} and maximum is ${versionString(MAX_VERSION)}.`,
      );
    }
  }

  /** For errors raised before negotiation (malformed JSON): nova had negotiated by then, so echo it. */
  negotiateQuietly(req: SimRequest): void {
    if (this.versions.has(req)) return;
    try {
      this.negotiate(req);
    } catch {
      // The request already failed for another reason; that error is what the client gets.
    }
  }

  get(req: SimRequest): ApiVersion {
    return this.versions.get(req) ?? MIN_VERSION;
  }

  /** True when the request's version is at least `min` (e.g. '2.47'). */
  atLeast(req: SimRequest, min: string): boolean {
    const v = parse(min);
    if (!v) throw new Error(`bad microversion literal ${min}`);
    return compare(this.get(req), v) >= 0;
  }

  /** Adds the version headers when the request was negotiated (not for 401s or unrouted paths). */
  echo(req: SimRequest, res: SimResponse): void {
    const v = this.versions.get(req);
    if (!v) return;
    const s = versionString(v);
    res.headers = {
      ...res.headers,
      'OpenStack-API-Version': `compute ${s}`,
      'X-OpenStack-Nova-API-Version': s,
      Vary: 'OpenStack-API-Version, X-OpenStack-Nova-API-Version',
    };
  }
}
