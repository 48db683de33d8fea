/** The API's two time formats. */

/** metav1.Time: RFC 3339 at second precision (conditions, Event timestamps). */
export function metaTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** metav1.MicroTime: RFC 3339 with microseconds (Lease times, events.k8s.io eventTime). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

/**
 * A metav1.Time as client-node types it (a Date) or the wire carries it (a string), in
 * milliseconds; undefined when absent or unreadable.
 */
export function timeMs(t: Date | string | undefined): number | undefined {
  if (t === undefined) return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}
