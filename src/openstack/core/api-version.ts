/**
 * API versions and microversions as numbers: "2.93", "v2.26" and "3.0" all parse to major.minor, so
 * negotiation and feature gates compare numbers, never strings ("2.9" < "2.10").
 */

export interface ApiVersion {
  major: number;
  minor: number;
}

/** Parses `2.93`, `v2.26`, `v2` (minor 0); undefined for anything else (including `latest`). */
export function parseApiVersion(text: string): ApiVersion | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?$/i.exec(text.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2] ?? 0) };
}

export function formatApiVersion(v: ApiVersion): string {
  return `${v.major}.${v.minor}`;
}

/** Negative when a < b, 0 when equal, positive when a > b. */
export function compareApiVersions(a: ApiVersion, b: ApiVersion): number {
  return a.major !== b.major ? a.major - b.major : a.minor - b.minor;
}

/** Parses or throws a TypeError naming the bad value: a malformed version in code is a programming error. */
export function requireApiVersion(text: string): ApiVersion {
  const v = parseApiVersion(text);
  if (!v) throw new TypeError(`"${text}" is not an API version (expected e.g. "2.79" or "v2.26")`);
  return v;
}

/**
 * What a service endpoint advertises: for Nova and Cinder the microversion range of the endpoint's
 * API, for Octavia the list of API versions of `GET /`. Feature gates ask `supports('2.26')`.
 */
export class ApiVersions {
  /** The endpoint the document was read from. */
  readonly endpoint: string;
  /** Lowest supported (micro)version, when the service says. */
  readonly min: ApiVersion | undefined;
  /** Highest supported (micro)version, when the service says. */
  readonly max: ApiVersion | undefined;
  /** Every version the document lists (Octavia lists each one; Nova gives only a range). */
  readonly listed: readonly ApiVersion[];

  constructor(init: {
    endpoint: string;
    min?: ApiVersion | undefined;
    max?: ApiVersion | undefined;
    listed?: readonly ApiVersion[];
  }) {
    this.endpoint = init.endpoint;
    const listed = [...(init.listed ?? [])].sort(compareApiVersions);
    this.listed = listed;
    this.min = init.min ?? listed[0];
    this.max = init.max ?? listed[listed.length - 1];
  }

  /** True when `version` lies within [min, max] (or, without a range, is listed). */
  supports(version: string | ApiVersion): boolean {
    const v = typeof version === 'string' ? requireApiVersion(version) : version;
    if (this.min && this.max)
      return compareApiVersions(v, this.min) >= 0 && compareApiVersions(v, this.max) <= 0;
    return this.listed.some((l) => compareApiVersions(l, v) === 0);
  }

  /** `2.1 – 2.93`, or `unversioned` when the service advertises no range. */
  toString(): string {
    if (!this.min || !this.max) return 'unversioned';
    return `${formatApiVersion(this.min)} – ${formatApiVersion(this.max)}`;
  }
}
