/**
 * Cinder microversions: `OpenStack-API-Version: volume 3.x` (or `latest`); 3.0 when absent. The
 * negotiated version is kept per request and echoed with `Vary`, on errors too, as cinder's Fault does.
 */
import { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';

export interface ApiVersion {
  major: number;
  minor: number;
}

export const MIN_VERSION: ApiVersion = { major: 3, minor: 0 };
/** Zed's maximum. */
export const MAX_VERSION: ApiVersion = { major: 3, minor: 70 };

export const versionString = (v: ApiVersion): string => `${v.major}.${v.minor}`;

export function atLeast(v: ApiVersion, minor: number): boolean {
  return v.major > 3 || (v.major === 3 && v.minor >= minor);
}

function compare(a: ApiVersion, b: ApiVersion): number {
  return a.major === b.major ? a.minor - b.minor : a.major - b.major;
}

function requested(req: SimRequest): string | undefined {
  const raw = req.headers['openstack-api-version'];
  const header = Array.isArray(raw) ? raw.join(',') : raw;
  if (header === undefined) return undefined;
  for (const item of header.split(',')) {
    const [service, version] = item.trim().split(/\s+/, 2);
    if (service?.toLowerCase() === 'volume' && version !== undefined) return version;
  }
  return undefined;
}

export class Microversions {
  private readonly versions = new WeakMap<SimRequest, ApiVersion>();

  /** 400 for a malformed version, 406 outside 3.0–3.70. Only the /v3 API negotiates. */
  negotiate(req: SimRequest): void {
    if (!req.path.startsWith('/v3')) return;
    const text = requested(req);
    if (text === undefined) {
      this.versions.set(req, MIN_VERSION);
      return;
    }
    if (text.toLowerCase() === 'latest') {
      this.versions.set(req, MAX_VERSION);
      return;
    }
    const m = /^([1-9]\d*)\.([1-9]\d*|0)$/.exec(text);
    if (!m) {
      throw new SimError(
        400,
        `API Version String ${text} is of invalid format. Must be of format MajorNum.MinorNum.`,
        {
          type: 'InvalidAPIVersionString',
        },
      );
    }
    const v = { major: Number(m[1]), minor: Number(m[2]) };
    if (compare(v, MIN_VERSION) < 0 || compare(v, MAX_VERSION) > 0) {
      throw new SimError(
        406,
        `Version ${versionString(v)} is not supported by the API. Minimum is ${versionString(MIN_VERSION)} and maximum is ${versionString(MAX_VERSION)}.`,
        { type: 'InvalidGlobalAPIVersion' },
      );
    }
    this.versions.set(req, v);
  }

  of(req: SimRequest): ApiVersion {
    return this.versions.get(req) ?? MIN_VERSION;
  }

  decorate(req: SimRequest, res: SimResponse): void {
    const v = this.versions.get(req);
    if (!v) return;
    res.headers = {
      ...res.headers,
      'OpenStack-API-Version': `volume ${versionString(v)}`,
      Vary: 'OpenStack-API-Version',
    };
  }
}
