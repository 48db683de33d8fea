/**
 * A deep copy of JSON data (what JSON.parse returns and Kubernetes and OpenStack objects are):
 * objects, arrays and primitives. About five times faster than structuredClone, which goes through
 * V8's serializer and is the largest single cost of a busy API server emulator and of controllers
 * copying the objects they patch. Keys whose value is `undefined` are kept, as structuredClone
 * keeps them; anything that is not JSON (a Date, a Map, a class instance, a cycle) is not supported.
 */
export function cloneJson<T>(value: T): T {
  return copy(value, 0) as T;
}

/** Far deeper than any object of the APIs; beyond it the value is taken for a cycle. */
const MAX_DEPTH = 1_000;

function copy(v: unknown, depth: number): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (depth > MAX_DEPTH) throw new RangeError(`cloneJson: nested deeper than ${MAX_DEPTH} levels (a cycle?)`);
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copy(v[i], depth + 1);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = copy((v as Record<string, unknown>)[k], depth + 1);
    // An own "__proto__" key (JSON.parse makes one) stays a key rather than setting the prototype.
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
    else out[k] = x;
  }
  return out;
}
