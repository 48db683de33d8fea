/**
 * Secret scrubbing for anything that may reach a log line, an Event or an error message.
 *
 * pino's own `redact` option only knows fixed paths; a clouds.yaml or a Keystone request body can
 * carry a secret at any depth, so we walk values and judge each key by name instead.
 */

export const REDACTED = '[REDACTED]';

/** Keys are compared lower-cased with `-` and `_` removed, so `X-Auth-Token`, `os_password` and `applicationCredentialSecret` all match. */
const SECRET_KEY =
  /password|passwd|secret|privatekey|apikey|authorization|cookie|(?:^|auth|subject|access|refresh|bearer|id)token$|^token$|^auth$/;

/** Keys that name where a secret is (a Kubernetes Secret, a file), not the secret itself. */
const SECRET_POINTER = /(secret|password|token)(name|namespace|ref|file|path)$/;

export function isSecretKey(key: string): boolean {
  // OS_TOKEN, OS_PASSWORD: environment dumps must redact like clouds.yaml keys.
  const normalized = key.toLowerCase().replace(/^os_/, '').replace(/[-_]/g, '');
  return SECRET_KEY.test(normalized) && !SECRET_POINTER.test(normalized);
}

/**
 * Patterns for secrets embedded in free text (messages, URLs, serialized bodies).
 * Each keeps the label and replaces only the value.
 */
const TEXT_PATTERNS: readonly RegExp[] = [
  // JSON: "password": "x", "secret":"x", "X-Auth-Token": "x"
  /("(?:[\w-]*(?:password|passwd|secret|token)|authorization)"\s*:\s*")((?:[^"\\]|\\.)*)(")/gi,
  // HTTP headers and key=value / key: value pairs
  /\b((?:x-auth-token|x-subject-token|authorization)\s*:\s*)(?:bearer\s+)?([^\s,;]+)()/gi,
  /\b([\w-]*(?:password|passwd|secret|token)\s*[=:]\s*)([^\s&,;"']+)()/gi,
  // INI / YAML lines: password = x, application-credential-secret: x
  /^(\s*[\w-]*(?:password|secret)\s*[=:]\s*)(.+?)(\s*)$/gim,
];

export function redactText(text: string): string {
  let out = text;
  for (const pattern of TEXT_PATTERNS) {
    out = out.replace(
      pattern,
      (_m, head: string, _value: string, tail: string) => `${head}${REDACTED}${tail}`,
    );
  }
  return out;
}

const MAX_DEPTH = 12;

/**
 * Returns a copy of `value` with secret-named keys replaced by {@link REDACTED} and secrets in strings
 * masked. Handles plain objects, arrays, Maps, fetch `Headers` and Errors; cycles and very deep values
 * are cut rather than followed, because a logger must never hang or throw.
 */
export function redact(value: unknown): unknown {
  return walk(value, 0, new WeakSet());
}

function walk(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Truncated]';
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1, seen));
    if (value instanceof Error) return walkError(value, depth, seen);
    if (value instanceof Date) return value;
    if (value instanceof Map || isHeaders(value)) {
      const entries: Record<string, unknown> = {};
      for (const [k, v] of (value as Map<unknown, unknown>).entries()) entries[String(k)] = v;
      return walkRecord(entries, depth, seen);
    }
    if (Buffer.isBuffer(value)) return `[Buffer ${value.length} bytes]`;
    return walkRecord(value as Record<string, unknown>, depth, seen);
  } finally {
    seen.delete(value);
  }
}

function walkRecord(record: Record<string, unknown>, depth: number, seen: WeakSet<object>) {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(record)) {
    out[key] = isSecretKey(key) && v !== undefined && v !== null ? REDACTED : walk(v, depth + 1, seen);
  }
  return out;
}

function walkError(err: Error, depth: number, seen: WeakSet<object>) {
  const out: Record<string, unknown> = {
    type: err.name,
    message: redactText(err.message),
  };
  if (err.stack) out.stack = redactText(err.stack);
  for (const [key, v] of Object.entries(err)) {
    out[key] = isSecretKey(key) ? REDACTED : walk(v, depth + 1, seen);
  }
  if (err.cause !== undefined) out.cause = walk(err.cause, depth + 1, seen);
  return out;
}

function isHeaders(value: object): value is Headers {
  return typeof Headers !== 'undefined' && value instanceof Headers;
}
