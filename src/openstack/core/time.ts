/**
 * OpenStack's timestamps. Nova and Neutron write RFC 3339 in UTC (`2024-05-01T10:00:00Z`); Octavia
 * and Cinder write UTC without a zone (`2024-05-01T10:00:00`, `2024-05-01T10:00:00.000000`), which
 * Date.parse would read as local time.
 */

/** Milliseconds since the epoch, or undefined for a missing or unreadable time. */
export function parseOpenStackTime(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const zoned = /(?:Z|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`;
  const ms = Date.parse(zoned);
  return Number.isNaN(ms) ? undefined : ms;
}
