/**
 * The names the Deployment and ReplicaSet controllers give: a ReplicaSet is
 * `<deployment>-<pod-template-hash>`, a pod `<replicaset>-<5 random characters>`, both in the
 * alphabet of apimachinery's `util/rand` (no vowels, no 0/1/3: no words, no look-alikes).
 *
 * The hash is upstream's recipe — FNV-32a of the pod template, its decimal value encoded with
 * `SafeEncodeString` — over the template's canonical JSON instead of Go's spew dump, so the same
 * template always gives the same name here, though not the name a real cluster would give it.
 */
import { randomInt } from 'node:crypto';
import type { V1PodTemplateSpec } from '@kubernetes/client-node';

const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** apimachinery's `rand.SafeEncodeString`: each byte mapped into the alphabet. */
function safeEncode(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) out += ALPHANUMS[byte % ALPHANUMS.length];
  return out;
}

function fnv32a(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** JSON with keys sorted at every depth: one text per value, whatever the order it was built in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The `pod-template-hash` of a Deployment's template (upstream `controller.ComputeHash`). */
export function podTemplateHash(template: V1PodTemplateSpec, collisionCount = 0): string {
  const text = canonical(template) + (collisionCount ? String(collisionCount) : '');
  return safeEncode(String(fnv32a(text)));
}

/** A generated name's random suffix (`generateName` in the API server: 5 characters). */
export function randomSuffix(length = 5): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMS[randomInt(ALPHANUMS.length)];
  return out;
}
