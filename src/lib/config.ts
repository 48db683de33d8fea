import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { isSecretKey, REDACTED } from './redact.ts';

/** One thing wrong with a config file, with everything a user needs to fix it without reading our code. */
export interface ConfigProblem {
  file: string;
  /** Dotted path of the key, e.g. `clouds.openstack.auth.auth_url`; empty for the document itself. */
  key: string;
  /**
   * The same path as segments (list indexes as numbers), for callers that name the key in their
   * own notation (`networks[0].uuid`); a key holding a dot stays one segment.
   */
  path?: readonly (string | number)[];
  /** The value found (redacted when the key holds a secret); undefined when the key is missing. */
  value: unknown;
  problem: string;
  fix: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly ConfigProblem[];
  /**
   * What the reader noticed before it gave up (an unknown key, a value it would ignore): often the
   * cause of a problem (a misspelt key reads as a missing one), so it belongs in the same report.
   */
  readonly warnings: readonly string[];

  constructor(problems: ConfigProblem[], warnings: readonly string[] = []) {
    super(problems.map(formatProblem).join('\n'));
    this.problems = problems;
    this.warnings = warnings;
  }

  static is(err: unknown): err is ConfigError {
    return err instanceof Error && err.name === 'ConfigError' && Array.isArray((err as ConfigError).problems);
  }

  /** `err` with `earlier` warnings ahead of its own, when it is a ConfigError; anything else as it is. */
  static withWarnings(err: unknown, earlier: readonly string[]): unknown {
    if (!ConfigError.is(err) || earlier.length === 0) return err;
    return new ConfigError([...err.problems], [...earlier, ...(err.warnings ?? [])]);
  }
}

/**
 * An input on the command line the user must fix (a flag's value, a missing flag): the CLI prints
 * the message, which names the flag and the fix, and exits 2.
 */
export class UsageError extends Error {
  override readonly name: string = 'UsageError';
}

export function formatProblem(p: ConfigProblem): string {
  const where = p.key ? `${p.file}: key "${p.key}"` : p.file;
  const value = p.value === undefined ? '' : ` (value ${JSON.stringify(p.value)})`;
  return `${where}${value}: ${p.problem}. Fix: ${p.fix}`;
}

export type ConfigFormat = 'yaml' | 'json';

/**
 * Validates an already-parsed document against a zod schema and turns every zod issue into a
 * {@link ConfigProblem}. A schema can supply its own fix text through zod's `error` option
 * (`z.string({ error: 'set it to the Keystone URL, e.g. https://keystone:5000/v3' })`).
 */
export function parseConfig<S extends z.ZodType>(schema: S, document: unknown, file: string): z.output<S> {
  const result = schema.safeParse(document, { error: () => GENERIC });
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.flatMap((issue) =>
      toProblems(issue, schema, document, file).map((p) => ({ path: segments(issue.path), ...p })),
    ),
  );
}

/**
 * A config file's text, or a ConfigError naming the file and the fix. An aborted read is not a
 * problem of the file: the abort goes up as it is (a stop during startup must not read as
 * "check the file permissions").
 */
export async function readConfigText(file: string, signal?: AbortSignal): Promise<string> {
  try {
    return await readFile(file, { encoding: 'utf8', ...(signal ? { signal } : {}) });
  } catch (err) {
    if (signal?.aborted || (err as Error).name === 'AbortError') throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError([
      {
        file,
        key: '',
        value: undefined,
        problem:
          code === 'ENOENT' ? 'the file does not exist' : `the file cannot be read (${code ?? String(err)})`,
        fix:
          code === 'ENOENT'
            ? 'check the path, or create the file'
            : 'check the file permissions for the user running shiftstack',
      },
    ]);
  }
}

/** Reads and validates a YAML or JSON file (chosen by extension unless given). */
export async function loadConfigFile<S extends z.ZodType>(
  file: string,
  schema: S,
  options: { format?: ConfigFormat; signal?: AbortSignal } = {},
): Promise<z.output<S>> {
  const text = await readConfigText(file, options.signal);
  const format = options.format ?? (extname(file).toLowerCase() === '.json' ? 'json' : 'yaml');
  return parseConfig(schema, parseText(text, format, file), file);
}

export function parseText(text: string, format: ConfigFormat, file: string): unknown {
  if (format === 'json') {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new ConfigError([
        {
          file,
          key: '',
          value: undefined,
          problem: `invalid JSON: ${(err as Error).message}`,
          fix: 'correct the JSON syntax',
        },
      ]);
    }
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((e) => ({
        file,
        key: '',
        value: undefined,
        problem: `invalid YAML at line ${e.linePos?.[0].line ?? '?'}: ${e.message.split('\n')[0] ?? e.code}`,
        fix:
          e.code === 'DUPLICATE_KEY'
            ? 'remove the repeated key'
            : 'correct the YAML syntax (indentation, quoting, colons)',
      })),
    );
  }
  return doc.toJS() as unknown;
}

const GENERIC = '\u0000generic';

function toProblems(
  issue: z.core.$ZodIssue,
  schema: z.ZodType,
  document: unknown,
  file: string,
): ConfigProblem[] {
  const custom = issue.message !== GENERIC && issue.message !== '' ? issue.message : undefined;
  const path = issue.path.map(String);
  const key = path.join('.');
  const value = redactValue(path, valueAt(document, issue.path));

  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = Object.keys(objectShapeAt(schema, issue.path) ?? {});
      return issue.keys.map((k) => {
        const suggestion = closest(k, known);
        return {
          file,
          key: [...path, k].join('.'),
          path: [...segments(issue.path), k],
          value: redactValue([k], valueAt(document, [...issue.path, k])),
          problem: 'unknown key',
          fix:
            custom ??
            (suggestion
              ? `did you mean "${suggestion}"? Rename it, or remove it`
              : `remove it; known keys here: ${known.join(', ') || '(none)'}`),
        };
      });
    }
    case 'invalid_type': {
      const missing = value === undefined;
      return [
        {
          file,
          key,
          value,
          problem: missing
            ? 'required key is missing'
            : `expected ${article(issue.expected)}, got ${describeType(value)}`,
          fix:
            custom ??
            describeOf(schema, issue.path) ??
            (missing ? `add "${key}"` : `set it to ${article(issue.expected)}`),
        },
      ];
    }
    case 'invalid_value': {
      const allowed = issue.values.map((v) => JSON.stringify(v));
      const suggestion = typeof value === 'string' ? closest(value, issue.values.map(String)) : undefined;
      return [
        {
          file,
          key,
          value,
          problem: 'value is not allowed',
          fix:
            custom ??
            `use one of ${allowed.join(', ')}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`,
        },
      ];
    }
    case 'too_small':
    case 'too_big': {
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      const op = issue.code === 'too_small' ? (issue.inclusive ? '>=' : '>') : issue.inclusive ? '<=' : '<';
      const unit = issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' items' : '';
      const subject = issue.origin === 'string' || issue.origin === 'array' ? 'length' : 'value';
      return [
        {
          file,
          key,
          value,
          problem: `${subject} must be ${op} ${String(bound)}${unit}`,
          fix: custom ?? describeOf(schema, issue.path) ?? `use a ${subject} ${op} ${String(bound)}${unit}`,
        },
      ];
    }
    case 'invalid_format':
      return [
        {
          file,
          key,
          value,
          problem: `not a valid ${FORMAT_NAMES[issue.format] ?? issue.format}`,
          fix: custom ?? describeOf(schema, issue.path) ?? `write a valid ${issue.format}`,
        },
      ];
    default:
      return [
        {
          file,
          key,
          value,
          problem: custom ?? 'invalid value',
          fix: describeOf(schema, issue.path) ?? custom ?? 'see the documentation of this key',
        },
      ];
  }
}

/** Zod's format names as a user knows them (`guid` is any 8-4-4-4-12 hex id, as OpenStack's). */
const FORMAT_NAMES: Readonly<Record<string, string>> = { guid: 'UUID', uuid: 'UUID' };

function segments(path: readonly PropertyKey[]): (string | number)[] {
  return path.map((seg) => (typeof seg === 'number' ? seg : String(seg)));
}

function valueAt(document: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = document;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

function redactValue(path: string[], value: unknown): unknown {
  if (path.some(isSecretKey) && value !== undefined) return REDACTED;
  if (value !== null && typeof value === 'object') return Array.isArray(value) ? '[list]' : '{…}';
  return value;
}

/** Follows a path through the schema, unwrapping optional/default/nullable/pipe wrappers. */
function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let cur: z.ZodType | undefined = unwrap(schema);
  for (const seg of path) {
    if (!cur) return undefined;
    if (cur instanceof z.ZodObject) cur = unwrap((cur.shape as Record<string, z.ZodType>)[String(seg)]);
    else if (cur instanceof z.ZodArray) cur = unwrap(cur.element as z.ZodType);
    else if (cur instanceof z.ZodRecord) cur = unwrap(cur.valueType as z.ZodType);
    else return undefined;
  }
  return cur;
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let cur = schema;
  for (let i = 0; cur && i < 16; i++) {
    if (cur instanceof z.ZodOptional || cur instanceof z.ZodNullable || cur instanceof z.ZodDefault) {
      cur = cur.unwrap() as z.ZodType;
    } else if (cur instanceof z.ZodPipe) {
      cur = cur.in as z.ZodType;
    } else break;
  }
  return cur;
}

function objectShapeAt(schema: z.ZodType, path: readonly PropertyKey[]): Record<string, unknown> | undefined {
  const node = schemaAt(schema, path);
  return node instanceof z.ZodObject ? node.shape : undefined;
}

function describeOf(schema: z.ZodType, path: readonly PropertyKey[]): string | undefined {
  return schemaAtRaw(schema, path)?.description ?? schemaAt(schema, path)?.description;
}

/** Like schemaAt but keeps the last wrapper, where `.describe()` is often attached. */
function schemaAtRaw(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  if (path.length === 0) return schema;
  const parent = schemaAt(schema, path.slice(0, -1));
  const last = String(path[path.length - 1]);
  if (parent instanceof z.ZodObject) return (parent.shape as Record<string, z.ZodType>)[last];
  return undefined;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return `${article(typeof value)} ${JSON.stringify(value)}`;
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`;
}

/** Nearest known word by edit distance, for "did you mean" hints; only close matches count. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}
