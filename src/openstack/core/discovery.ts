/**
 * Version discovery: what (micro)versions an endpoint serves, read once from its version document
 * and cached per endpoint for the process.
 *
 * - Nova and Cinder: `GET <endpoint up to its version>/` → `{"version":{"min_version":"2.1","version":"2.93"}}`.
 * - Octavia: `GET <endpoint>/` → `{"versions":[{"id":"v2.0"}, …, {"id":"v2.26"}]}`.
 * - Placement: `GET /` → `{"versions":[{"id":"v1.0","min_version":"1.0","max_version":"1.39"}]}`.
 * - Keystone and Glance answer their root with 300 and a list, Keystone under `versions.values`.
 */
import { raceSignal } from '../../lib/clock.ts';
import { ApiVersions, parseApiVersion, type ApiVersion } from './api-version.ts';
import { ApiVersionError } from './errors.ts';

const VERSION_SEGMENT = /^v\d+(\.\d+)?$/i;

/** The URL of the version document for an endpoint: its version root when versioned, else its root. */
export function versionDocumentUrl(endpoint: string): string {
  const u = new URL(endpoint);
  const segments = u.pathname.split('/');
  const at = segments.findIndex((s) => VERSION_SEGMENT.test(s));
  const path = at >= 0 ? segments.slice(0, at + 1).join('/') : u.pathname.replace(/\/+$/, '');
  return `${u.origin}${path}/`;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const ver = (v: unknown): ApiVersion | undefined => {
  const s = str(v);
  return s ? parseApiVersion(s) : undefined;
};

/** Reads a version document; `endpoint` picks the entry of a list that matches its version segment. */
export function parseVersionDocument(endpoint: string, body: unknown): ApiVersions {
  const root = obj(body);
  const single = obj(root?.version);
  if (single) return fromEntry(endpoint, single, [single]);
  const list = Array.isArray(root?.versions) ? root.versions : obj(root?.versions)?.values;
  if (!Array.isArray(list) || list.length === 0) {
    throw new ApiVersionError(endpoint, 'the version document has neither "version" nor "versions"');
  }
  const entries = list.map(obj).filter((e): e is Json => e !== undefined);
  const wanted = new URL(endpoint).pathname.split('/').find((s) => VERSION_SEGMENT.test(s));
  const wantedVersion = wanted ? parseApiVersion(wanted) : undefined;
  const match = wantedVersion
    ? entries.find((e) => {
        const id = ver(e.id);
        return id !== undefined && id.major === wantedVersion.major && id.minor === wantedVersion.minor;
      })
    : entries.find((e) => str(e.max_version) ?? str(e.version));
  return fromEntry(endpoint, match, entries);
}

function fromEntry(endpoint: string, entry: Json | undefined, all: Json[]): ApiVersions {
  const listed = all.map((e) => ver(e.id)).filter((v): v is ApiVersion => v !== undefined);
  const max = entry ? (ver(entry.version) ?? ver(entry.max_version)) : undefined;
  const min = entry ? ver(entry.min_version) : undefined;
  if (max && min) return new ApiVersions({ endpoint, min, max, listed });
  if (listed.length === 0) throw new ApiVersionError(endpoint, 'the version document lists no versions');
  return new ApiVersions({ endpoint, listed });
}

interface Entry {
  versions?: ApiVersions;
  at: number;
  flight?: Promise<ApiVersions> | undefined;
}

/** Version documents by URL, single-flight, kept `ttlMs` (a cloud upgrade is seen within the hour). */
export class DiscoveryCache {
  readonly ttlMs: number;
  private readonly entries = new Map<string, Entry>();

  constructor(options: { ttlMs?: number } = {}) {
    this.ttlMs = options.ttlMs ?? 3_600_000;
  }

  async get(
    url: string,
    load: () => Promise<ApiVersions>,
    now: number,
    signal?: AbortSignal,
  ): Promise<ApiVersions> {
    let entry = this.entries.get(url);
    if (entry?.versions && now - entry.at < this.ttlMs) return entry.versions;
    if (!entry) this.entries.set(url, (entry = { at: 0 }));
    const e = entry;
    if (!e.flight) {
      const flight = load()
        .then((versions) => {
          e.versions = versions;
          e.at = now;
          return versions;
        })
        .finally(() => {
          e.flight = undefined;
        });
      flight.catch(() => undefined);
      e.flight = flight;
    }
    return raceSignal(e.flight, signal);
  }

  clear(): void {
    this.entries.clear();
  }
}

export const sharedDiscoveryCache = new DiscoveryCache();
