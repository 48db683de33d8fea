/**
 * Placement microversions: `OpenStack-API-Version: placement 1.x` (or `latest`), 1.0 when absent.
 * Responses carry the lowercase `openstack-api-version`, and `vary` on success only, as the real one.
 */
import { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';

export interface ApiVersion {
  major: number;
  minor: number;
}

export const MIN_VERSION: ApiVersion = { major: 1, minor: 0 };
/** Zed's maximum. */
export const MAX_VERSION: ApiVersion = { major: 1, minor: 39 };

export class Microversions {
  private readonly versions = new WeakMap<SimRequest, ApiVersion>();

  /** 406 for anything but a known 1.x version. */
  negotiate(req: SimRequest): void {
    const text = requested(req);
    if (text === undefined) {
      this.versions.set(req, MIN_VERSION);
      return;
    }
    if (text.toLowerCase() === 'latest') {
      this.versions.set(req, MAX_VERSION);
      return;
    }
    const m = /^\s*(\d+)\.(\d+)\s*$/.exec(text);
    if (!m) {
      throw new SimError(406, `Invalid microversion: invalid version string: ${text}`, {
        type: 'placement.undefined_code',
      });
    }
    const v = { major: Number(m[1]), minor: Number(m[2]) };
    if (v.major !== 1 || v.minor > MAX_VERSION.minor) {
      throw new SimError(406, `Invalid microversion: Unacceptable version header: ${text}`, {
        type: 'placement.undefined_code',
      });
    }
    this.versions.set(req, v);
  }

  get(req: SimRequest): ApiVersion | undefined {
    return this.versions.get(req);
  }

  minor(req: SimRequest): number {
    return this.versions.get(req)?.minor ?? 0;
  }

  decorate(req: SimRequest, res: SimResponse): void {
    const v = this.versions.get(req);
    if (!v) return;
    const headers: Record<string, string> = {
      ...res.headers,
      'openstack-api-version': `placement ${v.major}.${v.minor}`,
    };
    if (res.status < 400) headers.vary = 'openstack-api-version';
    res.headers = headers;
  }
}

function requested(req: SimRequest): string | undefined {
  const raw = req.headers['openstack-api-version'];
  const header = Array.isArray(raw) ? raw.join(',') : raw;
  if (header === undefined) return undefined;
  for (const item of header.split(',')) {
    const [service, version] = item.trim().split(/\s+/, 2);
    if (service?.toLowerCase() === 'placement' && version !== undefined) return version;
  }
  return undefined;
}
