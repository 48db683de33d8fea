/**
 * The INI dialect of oslo.config (`oslo_config/iniparser.py` and `cfg.py`), which kuryr.conf is
 * written in. It is not gcfg (src/lib/gcfg.ts, OCCM's cloud.conf), and a file that oslo reads must
 * read the same here, so it has its own reader:
 *
 * - Option names hold underscores (`ports_pool_min`), which gcfg refuses.
 * - `#` and `;` start a comment only at the start of a line: `password = a#b` is the password `a#b`
 *   (gcfg would cut it at `#`).
 * - `key = value` or `key: value`, whichever separator comes first; the value is stripped, and one
 *   pair of matching quotes around the whole value is removed (`project = ""` is empty).
 * - A line starting with a blank continues the value above it (joined with a newline); a blank line
 *   ends it.
 * - Group names are case-insensitive except `DEFAULT` (oslo's `_normalize_group_name`); option names
 *   are case-sensitive, and `-` reads as `_` (oslo registers `opt.dest`).
 * - A key set twice: the last one wins for a single-valued option (oslo's MultiStrOpt keeps them
 *   all, so every value is kept here in order).
 * - String values are templates: `$$` is a `$`, `$name` the value of `[DEFAULT] name` and
 *   `${group.name}` the value of that option (oslo's `_substitute`), so a password rendered by
 *   OpenShift's cluster-network-operator with `$` doubled reads back as written.
 *
 * Several files (oslo's repeated `--config-file`) merge in order: a later file's value wins.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError, type ConfigProblem } from '../../lib/config.ts';
import { problem } from '../../openstack/config/problems.ts';

export interface IniEntry {
  /** Normalized: `-` as `_`. */
  name: string;
  /** As written, for messages. */
  rawName: string;
  value: string;
  file: string;
  line: number;
}

export interface IniSection {
  /** Normalized: lower case, except `DEFAULT`. */
  name: string;
  /** As first written, for messages. */
  rawName: string;
  entries: IniEntry[];
}

export interface IniDocument {
  /** The files read, in order. */
  files: string[];
  /** In order of first appearance; a section repeated (in one file or the next) adds to the same. */
  sections: IniSection[];
}

export const DEFAULT_GROUP = 'DEFAULT';

/** oslo's group-name rule: `DEFAULT` exactly, every other group without regard to case. */
export function normalizeGroup(name: string): string {
  return name === DEFAULT_GROUP ? name : name.toLowerCase();
}

export function normalizeKey(name: string): string {
  return name.replace(/-/g, '_');
}

export function iniSection(doc: IniDocument, name: string): IniSection | undefined {
  const key = normalizeGroup(name);
  return doc.sections.find((s) => s.name === key);
}

/** Every value of `key` in `section`, in file order. */
export function iniAll(section: IniSection | undefined, key: string): IniEntry[] {
  const name = normalizeKey(key);
  return section?.entries.filter((e) => e.name === name) ?? [];
}

/** The value oslo uses for a single-valued option: the last one. */
export function iniLast(section: IniSection | undefined, key: string): IniEntry | undefined {
  const all = iniAll(section, key);
  return all[all.length - 1];
}

/** `file:line`, as problems and warnings name a place. */
export function iniWhere(entry: Pick<IniEntry, 'file' | 'line'>): string {
  return `${entry.file}:${entry.line}`;
}

/** Parses one file's text into `into` (a new document when absent). Syntax errors are all reported. */
export function parseOsloIni(text: string, file: string, into?: IniDocument): IniDocument {
  const doc: IniDocument = into ?? { files: [], sections: [] };
  doc.files.push(file);
  const problems: ConfigProblem[] = [];
  const fail = (line: number, what: string, fix: string) =>
    problems.push({ file: `${file}:${line}`, key: '', value: undefined, problem: what, fix });

  let section: IniSection | undefined;
  let pending: { entry: IniEntry; lines: string[] } | undefined;
  const flush = () => {
    if (!pending) return;
    pending.entry.value = pending.lines.join('\n');
    pending = undefined;
  };
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((rawLine, index) => {
    const lineNo = index + 1;
    const line = rawLine.trimEnd();
    if (line === '') {
      flush();
      return;
    }
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (pending) pending.lines.push(line.trimStart());
      else
        fail(
          lineNo,
          'a line starting with a blank continues the value above it, and there is none',
          'remove the leading blanks, or join the line to the key it belongs to',
        );
      return;
    }
    flush();
    if (line.startsWith('[')) {
      if (!line.endsWith(']')) {
        fail(lineNo, 'a section header must end with ]', `write it as [${line.slice(1).trim()}]`);
        return;
      }
      const raw = line.slice(1, -1);
      if (raw === '') {
        fail(lineNo, 'the section has no name', 'write the group name between the brackets, e.g. [vif_pool]');
        return;
      }
      const name = normalizeGroup(raw);
      section = doc.sections.find((s) => s.name === name);
      if (!section) {
        section = { name, rawName: raw, entries: [] };
        doc.sections.push(section);
      }
      return;
    }
    if (line.startsWith('#') || line.startsWith(';')) return;
    const colon = line.indexOf(':');
    const equal = line.indexOf('=');
    if (colon < 0 && equal < 0) {
      fail(lineNo, "no '=' or ':' in the line", 'write key = value, or start a comment with #');
      return;
    }
    const at = colon < 0 || (equal >= 0 && equal < colon) ? equal : colon;
    const rawName = line.slice(0, at).trim();
    if (rawName === '') {
      fail(lineNo, 'the key is empty', 'write the option name before the =');
      return;
    }
    if (!section) {
      fail(
        lineNo,
        `${rawName} comes before any section header`,
        'put it under its group, e.g. [DEFAULT] or [kubernetes]',
      );
      return;
    }
    const entry: IniEntry = { name: normalizeKey(rawName), rawName, value: '', file, line: lineNo };
    section.entries.push(entry);
    // oslo unquotes the first line only, before any continuation joins it.
    pending = { entry, lines: [unquote(line.slice(at + 1).trim())] };
  });
  flush();
  if (problems.length > 0) throw new ConfigError(problems);
  return doc;
}

/** oslo strips one pair of matching quotes around the value (a lone quote reads as empty). */
function unquote(v: string): string {
  if (v !== '' && (v[0] === '"' || v[0] === "'") && v[0] === v[v.length - 1]) return v.slice(1, -1);
  return v;
}

/** Reads the files in order into one document (oslo's repeated `--config-file`). */
export async function readOsloIniFiles(files: readonly string[], signal?: AbortSignal): Promise<IniDocument> {
  const doc: IniDocument = { files: [], sections: [] };
  const problems: ConfigProblem[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, { encoding: 'utf8', signal });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      problems.push({
        file,
        key: '',
        value: undefined,
        problem: code === 'ENOENT' ? 'no such file' : `cannot read it: ${(err as Error).message}`,
        fix: 'pass the path of kuryr.conf with --config-file (in the pod: where the kuryr-config ConfigMap is mounted, /etc/kuryr/kuryr.conf)',
      });
      continue;
    }
    try {
      parseOsloIni(text, file, doc);
    } catch (err) {
      if (!ConfigError.is(err)) throw err;
      problems.push(...err.problems);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return doc;
}

/**
 * oslo's template substitution of a string value: `$$` → `$`, `$name` and `${name}` → the value of
 * `[DEFAULT] name`, `${group.name}` → that option's value. A reference to an option that is not set
 * in the files is a problem (oslo raises TemplateSubstitutionError; we do not know every default).
 */
export function substitute(
  doc: IniDocument,
  entry: IniEntry,
  section: string,
  seen: ReadonlySet<string> = new Set(),
): { value: string } | { problem: ConfigProblem } {
  const key = `[${section}] ${entry.rawName}`;
  if (!entry.value.includes('$')) return { value: entry.value };
  const here = `${section}.${entry.name}`;
  const out: string[] = [];
  const re = /\$(?:(\$)|\{([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)?)\}|([A-Za-z_][\w-]*))/g;
  let last = 0;
  for (let m = re.exec(entry.value); m; m = re.exec(entry.value)) {
    out.push(entry.value.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[1]) {
      out.push('$');
      continue;
    }
    const ref = (m[2] ?? m[3])!;
    const [group, name] = ref.includes('.') ? (ref.split('.') as [string, string]) : [DEFAULT_GROUP, ref];
    const target = iniLast(iniSection(doc, group), name);
    const id = `${normalizeGroup(group)}.${normalizeKey(name)}`;
    if (!target || seen.has(id) || id === here) {
      return {
        problem: problem(
          iniWhere(entry),
          key,
          entry.value,
          !target
            ? `"$${m[2] ? `{${ref}}` : ref}" refers to an option not set in the file (oslo substitutes $name and \${group.name})`
            : `"$${ref}" refers back to itself`,
          'write $$ for a literal $, or set the option it refers to',
        ),
      };
    }
    const inner = substitute(doc, target, normalizeGroup(group), new Set([...seen, here]));
    if ('problem' in inner) return inner;
    out.push(inner.value);
  }
  out.push(entry.value.slice(last));
  return { value: out.join('') };
}
