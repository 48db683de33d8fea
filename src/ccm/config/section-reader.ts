/**
 * Typed reads of one cloud.conf section with gcfg's value rules, as OCCM's `gcfg.ReadInto` applies
 * them to its option structs: the last value of a single-valued key wins, `key` alone is true for a
 * boolean and an error for anything else, durations are Go durations, numbers are decimal. Where OCCM
 * would stop (gcfg's fatal errors) we add a problem naming file:line, key, value and fix; where OCCM
 * is silent (unknown keys, unknown sections) we warn.
 */
import { closest } from '../../lib/config.ts';
import { GCFG_BOOL_FIX, gcfgAll, gcfgBool, gcfgLast, gcfgWhere } from '../../lib/gcfg.ts';
import type { GcfgDocument, GcfgEntry, GcfgSection } from '../../lib/gcfg.ts';
import { parseGoDuration } from '../../openstack/config/duration.ts';
import { warning } from '../../openstack/config/finalize.ts';
import type { Problems } from '../../openstack/config/problems.ts';
import { subnetNamePattern } from '../service/floating-subnet.ts';

/** Shared by the readers of one document: problems end in one ConfigError, warnings in the result. */
export interface ReadContext {
  document: GcfgDocument;
  problems: Problems;
  warnings: string[];
}

export interface KeyRules {
  /** Keys read with gcfgAll: repeating them adds values instead of overriding. */
  multi?: readonly string[];
  /** Keys OCCM once read and no longer does, with the reason given in the warning. */
  retired?: Readonly<Record<string, string>>;
}

/** `[LoadBalancer]` or `[LoadBalancerClass "internal"]`, as written in the file. */
export function sectionLabel(section: GcfgSection): string {
  return section.subsection === undefined
    ? `[${section.rawName}]`
    : `[${section.rawName} ${JSON.stringify(section.subsection)}]`;
}

export class SectionReader {
  readonly section: GcfgSection | undefined;
  private readonly ctx: ReadContext;
  private readonly label: string;

  constructor(ctx: ReadContext, section: GcfgSection | undefined, label: string) {
    this.ctx = ctx;
    this.section = section;
    this.label = section ? sectionLabel(section) : label;
  }

  /** Where an entry is, in the shape problems and warnings use. */
  where(entry: GcfgEntry): { file: string; key: string } {
    return { file: gcfgWhere(this.ctx.document, entry.line), key: `${this.label} ${entry.rawName}` };
  }

  warn(entry: GcfgEntry, text: string): void {
    const at = this.where(entry);
    this.ctx.warnings.push(warning(at.file, at.key, text));
  }

  problem(entry: GcfgEntry, value: unknown, text: string, fix: string): void {
    const at = this.where(entry);
    this.ctx.problems.add(at.file, at.key, value, text, fix);
  }

  /** Warns about keys OCCM would ignore (with a did-you-mean) and single-valued keys set twice. */
  checkKeys(known: readonly string[], rules: KeyRules = {}): void {
    const byName = new Map<string, GcfgEntry[]>();
    for (const entry of this.section?.entries ?? []) {
      byName.set(entry.name, [...(byName.get(entry.name) ?? []), entry]);
    }
    for (const [name, entries] of byName) {
      const last = entries[entries.length - 1]!;
      const retired = rules.retired?.[name];
      if (retired !== undefined) {
        this.warn(last, `ignored: ${retired}`);
      } else if (!known.includes(name)) {
        const hint = closest(name, known);
        this.warn(last, `unknown key, ignored${hint ? ` (did you mean "${hint}"?)` : ''}`);
      } else if (entries.length > 1 && !rules.multi?.includes(name)) {
        this.warn(last, `set ${entries.length} times; this last one wins`);
      }
    }
  }

  entry(key: string): GcfgEntry | undefined {
    return gcfgLast(this.section, key);
  }

  /** The last value; `key` alone is gcfg's "blank value" error for a string; `key =` means unset. */
  text(key: string): string | undefined {
    const entry = this.entry(key);
    if (!entry) return undefined;
    if (entry.implicit) {
      this.problem(
        entry,
        undefined,
        'the key has no value',
        `write ${entry.rawName} = <value>, or remove the line`,
      );
      return undefined;
    }
    return entry.value === '' ? undefined : entry.value;
  }

  /** Every value of a repeatable key, in file order (`key` alone clears the ones before, as in gcfg). */
  all(key: string): string[] {
    return gcfgAll(this.section, key)
      .map((e) => e.value)
      .filter((v) => v !== '');
  }

  bool(key: string, fallback: boolean): boolean {
    const entry = this.entry(key);
    if (!entry) return fallback;
    const v = gcfgBool(entry);
    if (v === undefined) {
      this.problem(entry, entry.value, 'not a boolean', GCFG_BOOL_FIX);
      return fallback;
    }
    return v;
  }

  /** A Go duration (`5s`, `1m30s`) in milliseconds; negative values are refused. */
  duration(key: string, fallbackMs: number, example: string): number {
    const entry = this.entry(key);
    if (!entry) return fallbackMs;
    const ms = entry.implicit ? undefined : parseGoDuration(entry.value);
    if (ms === undefined) {
      this.problem(
        entry,
        entry.implicit ? undefined : entry.value,
        'not a Go duration',
        `write a number with a unit, e.g. ${entry.rawName} = ${example} (units: ms, s, m, h)`,
      );
      return fallbackMs;
    }
    if (ms < 0) {
      this.problem(
        entry,
        entry.value,
        'the duration is negative',
        `use a positive duration, e.g. ${example}`,
      );
      return fallbackMs;
    }
    return ms;
  }

  /** A decimal integer within [min, max]; `fix` says what the key means for the out-of-range case. */
  integer(key: string, fallback: number, range: { min: number; max?: number; fix: string }): number {
    const entry = this.entry(key);
    if (!entry) return fallback;
    const text = entry.implicit ? '' : entry.value;
    if (!/^[+-]?\d+$/.test(text)) {
      this.problem(
        entry,
        entry.implicit ? undefined : entry.value,
        'not a whole number',
        `write a decimal number, e.g. ${entry.rawName} = ${fallback}`,
      );
      return fallback;
    }
    const n = Number(text);
    if (n < range.min || (range.max !== undefined && n > range.max)) {
      const bounds =
        range.max === undefined ? `at least ${range.min}` : `between ${range.min} and ${range.max}`;
      this.problem(entry, entry.value, `must be ${bounds}`, range.fix);
      return fallback;
    }
    return n;
  }

  /** A floating-subnet name pattern: a glob, or `~` and a regular expression that must compile. */
  subnetPattern(key: string): string | undefined {
    const value = this.text(key);
    if (value === undefined) return undefined;
    try {
      subnetNamePattern(value);
    } catch (err) {
      this.problem(
        this.entry(key)!,
        value,
        (err as Error).message,
        'fix the regular expression after "~", or write a glob such as public-* instead',
      );
    }
    return value;
  }

  /** One of a fixed list, compared exactly; a near miss gets a did-you-mean. */
  oneOf<T extends string>(key: string, fallback: T, allowed: readonly T[], meaning: string): T {
    const value = this.text(key);
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    const entry = this.entry(key)!;
    const hint = closest(value, allowed);
    this.problem(
      entry,
      value,
      `not a known ${meaning}`,
      `use one of ${allowed.join(', ')}${hint ? ` (did you mean "${hint}"?)` : ''}`,
    );
    return fallback;
  }
}
