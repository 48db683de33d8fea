/**
 * What one version cannot hold, kept for the way back in the annotation Cluster API uses for
 * this (`cluster.x-k8s.io/conversion-data`, JSON), so a round trip through the other version
 * gives the object back as it was.
 *
 * The annotation holds, under the name of the version the values belong to, each value by the
 * path of the field it came from: `{"v1beta1": {"status.ready": …, "spec.flavor": …}}`. A
 * conversion into version V reads the entries under V (and restores each one only where the
 * object still agrees with it: a field changed since is not overwritten by a stale copy), drops
 * the annotation, and writes a new one with what V cannot hold of the source version.
 */
export const CONVERSION_DATA_ANNOTATION = 'cluster.x-k8s.io/conversion-data';

export type Json = Record<string, unknown>;

export function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The values kept for one version, by field path. */
type Entries = Record<string, unknown>;

export class Carry {
  /** What the source version holds that the target cannot, for the next conversion back. */
  readonly kept: Entries = {};
  private readonly restorable: Entries;
  constructor(restorable: Entries) {
    this.restorable = restorable;
  }

  keep(path: string, value: unknown): void {
    this.kept[path] = structuredClone(value);
  }

  /** A value kept for the target version at `path` by an earlier conversion, if any. */
  take(path: string): unknown {
    return Object.hasOwn(this.restorable, path) ? structuredClone(this.restorable[path]) : undefined;
  }
}

/** Our annotation's entries, or undefined when the annotation is absent or not ours. */
function parse(text: string | undefined): Record<string, Entries> | undefined {
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObj(data)) return undefined;
  for (const [k, v] of Object.entries(data)) if (!/^v\d/.test(k) || !isObj(v)) return undefined;
  return data as Record<string, Entries>;
}

/**
 * Runs `convert` on a copy of `obj` from version `from` to `to`, with the carried values of the
 * annotation, and leaves on the result the annotation the way back needs (or none).
 */
export function withCarry(
  obj: Json,
  from: string,
  to: string,
  convert: (obj: Json, carry: Carry) => void,
): Json {
  const out = structuredClone(obj);
  const metadata = isObj(out.metadata) ? out.metadata : undefined;
  const annotations = metadata && isObj(metadata.annotations) ? metadata.annotations : undefined;
  const raw = annotations?.[CONVERSION_DATA_ANNOTATION];
  const ours = parse(typeof raw === 'string' ? raw : undefined);
  const carry = new Carry(ours?.[to] ?? {});
  convert(out, carry);
  const kept = Object.keys(carry.kept).length > 0;
  if (ours && annotations) delete annotations[CONVERSION_DATA_ANNOTATION];
  if (kept) {
    const md = isObj(out.metadata) ? out.metadata : (out.metadata = {});
    const ann = isObj(md.annotations) ? md.annotations : (md.annotations = {});
    ann[CONVERSION_DATA_ANNOTATION] = JSON.stringify({ [from]: carry.kept });
  }
  if (metadata && isObj(metadata.annotations) && Object.keys(metadata.annotations).length === 0) {
    delete metadata.annotations;
  }
  return out;
}
