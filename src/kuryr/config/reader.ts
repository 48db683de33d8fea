/**
 * Typed reads of kuryr.conf's options with oslo.config's value rules (`oslo_config/types.py`):
 * booleans are true/false, yes/no, on/off, 1/0 (any case); integers are decimal; a list is split on
 * commas with blanks trimmed (`ListOpt`); a string's `$` templates are substituted. Where oslo
 * would refuse to start (a bad value, a choice not offered) we add a problem naming `file:line`,
 * `[group] key`, the value and the fix; where it would be silent (a key it does not know) we warn.
 */
import { closest, type ConfigProblem } from '../../lib/config.ts';
import { warning } from '../../openstack/config/finalize.ts';
import { problem } from '../../openstack/config/problems.ts';
import { iniLast, iniSection, iniWhere, substitute, type IniDocument, type IniEntry } from './ini.ts';

/** Shared by the readers of one document: problems end in one ConfigError, warnings in the result. */
export interface ReadContext {
  doc: IniDocument;
  problems: ConfigProblem[];
  warnings: string[];
}

export class GroupReader {
  readonly group: string;
  private readonly ctx: ReadContext;
  /** The keys this reader was asked for (read or not set): the group's implemented options. */
  readonly asked = new Set<string>();

  constructor(ctx: ReadContext, group: string) {
    this.ctx = ctx;
    this.group = group;
  }

  key(entry: Pick<IniEntry, 'rawName'>): string {
    return `[${this.group}] ${entry.rawName}`;
  }

  warn(entry: IniEntry, text: string): void {
    this.ctx.warnings.push(warning(iniWhere(entry), this.key(entry), text));
  }

  problem(entry: IniEntry, value: unknown, text: string, fix: string): void {
    this.ctx.problems.push(problem(iniWhere(entry), this.key(entry), value, text, fix));
  }

  /** The entry oslo uses (the last one), also under a deprecated name. */
  entry(key: string, deprecated: readonly string[] = []): IniEntry | undefined {
    this.asked.add(key);
    for (const d of deprecated) this.asked.add(d);
    const section = iniSection(this.ctx.doc, this.group);
    const found = [key, ...deprecated].map((k) => iniLast(section, k)).filter((e) => e !== undefined);
    // The latest written wins, as oslo reads a deprecated name as the same option.
    return found.sort((a, b) => a.line - b.line)[found.length - 1];
  }

  /** The string value, templates substituted; `fallback` when not set. */
  text(key: string, fallback: string, deprecated: readonly string[] = []): string {
    const entry = this.entry(key, deprecated);
    if (!entry) return fallback;
    const s = substitute(this.ctx.doc, entry, this.group);
    if ('problem' in s) {
      this.ctx.problems.push(s.problem);
      return fallback;
    }
    return s.value;
  }

  /** oslo's ListOpt: comma-separated, blanks trimmed, empty items dropped; empty text is an empty list. */
  list(key: string, fallback: readonly string[], deprecated: readonly string[] = []): string[] {
    const entry = this.entry(key, deprecated);
    if (!entry) return [...fallback];
    return this.text(key, '', deprecated)
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  }

  bool(key: string, fallback: boolean): boolean {
    const entry = this.entry(key);
    if (!entry) return fallback;
    const v = entry.value.trim().toLowerCase();
    if (['true', 'yes', 'on', '1'].includes(v)) return true;
    if (['false', 'no', 'off', '0'].includes(v)) return false;
    this.problem(
      entry,
      entry.value,
      'not a boolean',
      'write true or false (oslo also reads yes/no, on/off, 1/0)',
    );
    return fallback;
  }

  /** A decimal integer within [min, max]; `meaning` says what the key is, for the range's fix. */
  int(key: string, fallback: number, range: { min: number; max?: number; meaning: string }): number {
    const entry = this.entry(key);
    if (!entry) return fallback;
    const text = entry.value.trim();
    if (!/^[+-]?\d+$/.test(text)) {
      this.problem(
        entry,
        entry.value,
        'not a whole number',
        `write a decimal number, e.g. ${entry.rawName} = ${fallback}`,
      );
      return fallback;
    }
    const n = Number(text);
    if (n < range.min || (range.max !== undefined && n > range.max)) {
      const bounds =
        range.max === undefined ? `at least ${range.min}` : `between ${range.min} and ${range.max}`;
      this.problem(entry, entry.value, `must be ${bounds}`, `write ${range.meaning} ${bounds}`);
      return fallback;
    }
    return n;
  }

  /** A TCP port (oslo's PortOpt): 0 to 65535. */
  port(key: string, fallback: number): number {
    return this.int(key, fallback, { min: 0, max: 65535, meaning: 'a port' });
  }

  /**
   * One of the values shiftstack builds. `upstream` are the other values upstream accepts, for a
   * message that says the value is real but not built here, rather than misspelt.
   */
  oneOf<T extends string>(
    key: string,
    fallback: T,
    allowed: readonly T[],
    upstream: Readonly<Record<string, string>> = {},
  ): T {
    const entry = this.entry(key);
    if (!entry) return fallback;
    const value = this.text(key, fallback);
    if ((allowed as readonly string[]).includes(value)) return value as T;
    const why = upstream[value];
    const choices = allowed.join(', ');
    if (why !== undefined) {
      this.problem(entry, value, `upstream's ${value} is not built in shiftstack: ${why}`, `use ${choices}`);
    } else {
      const near = closest(value, allowed);
      this.problem(
        entry,
        value,
        'not a value this option takes',
        `use ${choices}${near ? ` (did you mean "${near}"?)` : ''}`,
      );
    }
    return fallback;
  }
}
