/**
 * A reader for gcfg, the git-config style INI that Go programs (OCCM's cloud.conf among them) read
 * with gopkg.in/gcfg.v1. It follows gcfg rather than a generic INI dialect so a file that OCCM
 * accepts parses the same here, and one that OCCM rejects fails here with the line and a fix:
 *
 * - `[Section]` and `[Section "subsection"]`; section and key names are case-insensitive, made of
 *   letters, digits and `-` and starting with a letter; subsection names are case-sensitive.
 * - `key = value`; leading and trailing blanks are dropped, inner blanks kept; parts of a value may be
 *   double-quoted, and inside quotes `\"`, `\\`, `\n` and `\t` are escapes; an unquoted `\` at the end
 *   of a line continues the value on the next line.
 * - `;` and `#` start a comment anywhere outside quotes.
 * - `key` alone (no `=`) is gcfg's "blank" value: true for a boolean, a reset for a multi-valued key.
 * - Repeated sections merge; repeated keys keep every value in order (gcfg lets the last win for a
 *   single-valued key and appends for a multi-valued one; {@link gcfgLast} and {@link gcfgAll} do that).
 *
 * The document keeps the line of each key so that errors about values can say `cloud.conf:12`.
 *
 * A parsed document can be edited ({@link gcfgSet}, {@link gcfgDelete}, {@link gcfgDeleteSection})
 * and written back with {@link formatGcfg}, which keeps every byte it was not asked to change:
 * comments, blank lines, order, indentation, quoting and the spelling of names. Only an edited
 * value, a removed entry or section, and what was added differ from the text that was read.
 */
import { ConfigError, readConfigText } from './config.ts';
import type { ConfigProblem } from './config.ts';

export interface GcfgEntry {
  /** Lower-cased: gcfg matches key names without regard to case. */
  name: string;
  /** As written, for messages. */
  rawName: string;
  /** Unquoted and unescaped; empty for an implicit entry. */
  value: string;
  /** Written without `=`. */
  implicit: boolean;
  line: number;
}

export interface GcfgSection {
  /** Lower-cased: gcfg matches section names without regard to case. */
  name: string;
  /** As first written, for messages. */
  rawName: string;
  /** Case-sensitive; undefined for a plain `[Section]`. */
  subsection: string | undefined;
  /** Line of the first header of this section. */
  line: number;
  entries: GcfgEntry[];
}

export interface GcfgDocument {
  file: string;
  /** In order of first appearance; a header repeated later adds to the same section. */
  sections: GcfgSection[];
  /** The text it was read from, for {@link formatGcfg}; absent for a document built in code. */
  source?: GcfgSource;
}

/**
 * Where each header and entry of a parsed document was written. Offsets count code points of
 * `text` (the file without a BOM); a statement's span runs from the start of its line to after its
 * newline, so what lies between spans is comments and blank lines.
 */
export interface GcfgSource {
  text: string;
  items: GcfgSourceItem[];
}

export type GcfgSourceItem =
  | { kind: 'header'; section: GcfgSection; start: number; end: number }
  | {
      kind: 'entry';
      section: GcfgSection;
      entry: GcfgEntry;
      start: number;
      end: number;
      /** The value as written, quotes included; absent for an implicit entry. */
      valueStart?: number;
      valueEnd?: number;
      /** What was read, to tell an edited entry from an untouched one. */
      value: string;
      implicit: boolean;
      /** Continued over more than one line with `\`. */
      multiline: boolean;
    };

/** `file:line`, the way errors about a key point at it. */
export function gcfgWhere(doc: GcfgDocument, line: number): string {
  return `${doc.file}:${line}`;
}

/** The section with this name (any case) and subsection (exact), if present. */
export function gcfgSection(doc: GcfgDocument, name: string, subsection?: string): GcfgSection | undefined {
  const lower = name.toLowerCase();
  return doc.sections.find((s) => s.name === lower && s.subsection === subsection);
}

/** Every `[name "…"]` section, in file order. */
export function gcfgSubsections(doc: GcfgDocument, name: string): GcfgSection[] {
  const lower = name.toLowerCase();
  return doc.sections.filter((s) => s.name === lower && s.subsection !== undefined);
}

/** Single-valued reading: the last entry for the key wins, as in gcfg. */
export function gcfgLast(section: GcfgSection | undefined, key: string): GcfgEntry | undefined {
  const lower = key.toLowerCase();
  const entries = section?.entries ?? [];
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i]!.name === lower) return entries[i];
  }
  return undefined;
}

/** Multi-valued reading: every value in order; an implicit entry (no `=`) clears those before it, as in gcfg. */
export function gcfgAll(section: GcfgSection | undefined, key: string): GcfgEntry[] {
  const lower = key.toLowerCase();
  const out: GcfgEntry[] = [];
  for (const entry of section?.entries ?? []) {
    if (entry.name !== lower) continue;
    if (entry.implicit) out.length = 0;
    else out.push(entry);
  }
  return out;
}

/** gcfg's boolean words; an implicit entry is true. Undefined when the value is not a boolean. */
export function gcfgBool(entry: GcfgEntry): boolean | undefined {
  if (entry.implicit) return true;
  const v = entry.value.toLowerCase();
  if (v === 'true' || v === 'yes' || v === 'on' || v === '1') return true;
  if (v === 'false' || v === 'no' || v === 'off' || v === '0') return false;
  return undefined;
}

export const GCFG_BOOL_FIX = 'use true or false (gcfg also reads yes/no, on/off, 1/0)';

/* Editing, and writing back. */

/** The section of that name and subsection, added at the end when absent. */
export function gcfgEnsureSection(doc: GcfgDocument, name: string, subsection?: string): GcfgSection {
  const existing = gcfgSection(doc, name, subsection);
  if (existing) return existing;
  const created: GcfgSection = { name: name.toLowerCase(), rawName: name, subsection, line: 0, entries: [] };
  doc.sections.push(created);
  return created;
}

/**
 * Sets a single-valued key: the entry gcfg reads (the last one) gets the value, in place; a key
 * not there is added at the end of its section (created if absent).
 */
export function gcfgSet(
  doc: GcfgDocument,
  section: string,
  key: string,
  value: string,
  subsection?: string,
): GcfgEntry {
  const s = gcfgEnsureSection(doc, section, subsection);
  const last = gcfgLast(s, key);
  if (last) {
    last.value = value;
    last.implicit = false;
    return last;
  }
  const entry: GcfgEntry = { name: key.toLowerCase(), rawName: key, value, implicit: false, line: 0 };
  s.entries.push(entry);
  return entry;
}

/** Removes every entry of `key` (any case) from the section; returns those removed. */
export function gcfgDelete(
  doc: GcfgDocument,
  section: string,
  key: string,
  subsection?: string,
): GcfgEntry[] {
  const s = gcfgSection(doc, section, subsection);
  if (!s) return [];
  const lower = key.toLowerCase();
  const removed = s.entries.filter((e) => e.name === lower);
  s.entries = s.entries.filter((e) => e.name !== lower);
  return removed;
}

/** Removes a section with all its entries; returns whether it was there. */
export function gcfgDeleteSection(doc: GcfgDocument, name: string, subsection?: string): boolean {
  const s = gcfgSection(doc, name, subsection);
  if (!s) return false;
  doc.sections = doc.sections.filter((x) => x !== s);
  return true;
}

const QUOTE_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '"': '\\"',
  '\n': '\\n',
  '\t': '\\t',
};

/**
 * A value as gcfg reads it back: bare when it can be, otherwise in double quotes with `\\`, `\"`,
 * `\n` and `\t` escaped (blanks at either end, comment characters, quotes, backslashes, line
 * breaks and tabs need them; an empty value is written `""`).
 */
export function gcfgQuote(value: string): string {
  if (value.includes('\r')) throw new TypeError('a gcfg value cannot hold a carriage return');
  if (/^[^\s"\\;#]([^"\\;#\n\t]*[^\s"\\;#])?$/u.test(value)) return value;
  return `"${value.replace(/[\\"\n\t]/g, (c) => QUOTE_ESCAPES[c]!)}"`;
}

function formatHeader(section: GcfgSection): string {
  if (section.subsection === undefined) return `[${section.rawName}]`;
  return `[${section.rawName} "${section.subsection.replace(/[\\"\n\t]/g, (c) => QUOTE_ESCAPES[c]!)}"]`;
}

function formatEntry(entry: GcfgEntry, indent = ''): string {
  return entry.implicit
    ? `${indent}${entry.rawName}\n`
    : `${indent}${entry.rawName} = ${gcfgQuote(entry.value)}\n`;
}

/** The comment lines right above a header (no blank line between): they belong to it. */
function commentBlockStart(trivia: string): number {
  const lines = trivia.split('\n');
  // trivia ends with a newline (it runs up to a line start), so the last element is empty.
  let i = lines.length - 1;
  while (i > 0 && /^[ \t]*[;#]/.test(lines[i - 1]!)) i--;
  return lines.slice(0, i).join('\n').length + (i > 0 ? 1 : 0);
}

/**
 * The document as gcfg text. A parsed document keeps its text wherever it was not edited: an
 * entry whose value changed keeps its line with only the value replaced; a removed entry loses its
 * line(s); a removed section loses its header, its entries, the comments between them and the
 * comment lines right above its header; entries added to a section follow its last entry; new
 * sections go at the end, after a blank line.
 */
export function formatGcfg(doc: GcfgDocument): string {
  const source = doc.source;
  const live = new Set(doc.sections);
  const known = new Set<GcfgEntry>();
  const chars = source ? Array.from(source.text) : [];
  const slice = (a: number, b?: number) => chars.slice(a, b).join('');
  // Where each section's new entries go: after its last entry kept, else after its last header.
  const anchors = new Map<GcfgSection, GcfgSourceItem>();
  for (const item of source?.items ?? []) {
    if (item.kind === 'entry') known.add(item.entry);
    if (!live.has(item.section)) continue;
    if (item.kind === 'entry' && !item.section.entries.includes(item.entry)) continue;
    const at = anchors.get(item.section);
    if (!at || at.kind === 'header' || item.kind === 'entry') anchors.set(item.section, item);
  }
  const added = (section: GcfgSection) => section.entries.filter((e) => !known.has(e));

  let out = '';
  const newline = () => {
    if (out !== '' && !out.endsWith('\n')) out += '\n';
  };
  let pos = 0;
  let inRemoved = false;
  let afterRemoved = false;
  // After a removed section, the blank lines that separated it go if one already separates.
  const addTrivia = (trivia: string) => {
    if (afterRemoved && (out === '' || out.endsWith('\n\n'))) trivia = trivia.replace(/^([ \t]*\r?\n)+/, '');
    afterRemoved = false;
    out += trivia;
  };
  for (const item of source?.items ?? []) {
    const trivia = slice(pos, item.start);
    pos = item.end;
    if (item.kind === 'header') {
      const removed = !live.has(item.section);
      if (inRemoved) afterRemoved = true;
      addTrivia(removed ? trivia.slice(0, commentBlockStart(trivia)) : trivia);
      inRemoved = removed;
      if (removed) continue;
      out += slice(item.start, item.end);
    } else {
      if (inRemoved) continue;
      addTrivia(trivia);
      if (item.section.entries.includes(item.entry)) out += formatItem(item, slice);
    }
    if (anchors.get(item.section) === item) {
      const indent = item.kind === 'entry' ? /^[ \t]*/.exec(slice(item.start, item.end))![0] : '';
      const fresh = added(item.section);
      if (fresh.length > 0) newline();
      for (const entry of fresh) out += formatEntry(entry, indent);
    }
  }
  if (inRemoved) afterRemoved = true;
  addTrivia(slice(pos));
  for (const section of doc.sections) {
    if (anchors.has(section)) continue;
    newline();
    if (out !== '' && !out.endsWith('\n\n')) out += '\n';
    out += `${formatHeader(section)}\n`;
    for (const entry of section.entries) out += formatEntry(entry);
  }
  return out;
}

function formatItem(
  item: Extract<GcfgSourceItem, { kind: 'entry' }>,
  slice: (a: number, b?: number) => string,
): string {
  const { entry } = item;
  const text = slice(item.start, item.end);
  if (entry.value === item.value && entry.implicit === item.implicit) return text;
  if (!item.implicit && !entry.implicit && !item.multiline && item.valueEnd !== undefined) {
    return slice(item.start, item.valueStart) + gcfgQuote(entry.value) + slice(item.valueEnd, item.end);
  }
  // Rewritten whole (a comment after it goes with the old value); the file's last line stays
  // without a newline if it had none.
  const line = formatEntry(entry, /^[ \t]*/.exec(text)![0]);
  return text.endsWith('\n') ? line : line.slice(0, -1);
}

export async function readGcfgFile(path: string, signal?: AbortSignal): Promise<GcfgDocument> {
  const text = await readConfigText(path, signal);
  return parseGcfg(text, path);
}

/** Parses gcfg text; every syntax error in the file is reported at once, each with its line. */
export function parseGcfg(text: string, file: string): GcfgDocument {
  return new Parser(text, file).parse();
}

const ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', n: '\n', t: '\t' };
const ESCAPE_FIX =
  'inside double quotes only \\" \\\\ \\n and \\t are escapes; write a literal backslash as \\\\';

function isLetter(c: string | undefined): boolean {
  return c !== undefined && /^\p{L}$/u.test(c);
}

function isNameChar(c: string | undefined): boolean {
  return c !== undefined && /^[\p{L}\p{N}-]$/u.test(c);
}

function isBlank(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\r';
}

function endsStatement(c: string | undefined): boolean {
  return c === undefined || c === '\n' || c === ';' || c === '#';
}

/** Thrown inside the parser to abandon the current line; never escapes {@link parseGcfg}. */
class LineError extends Error {}

class Parser {
  private readonly chars: string[];
  private pos = 0;
  private line = 1;
  private readonly problems: ConfigProblem[] = [];
  private readonly sections: GcfgSection[] = [];
  private current: GcfgSection | undefined;
  private readonly file: string;
  private readonly text: string;
  private readonly items: GcfgSourceItem[] = [];
  /** Where the line being read starts. */
  private lineStart = 0;

  constructor(text: string, file: string) {
    // A leading BOM is skipped, as gcfg does for files written on Windows.
    this.text = text.startsWith('\uFEFF') ? text.slice(1) : text;
    this.chars = Array.from(this.text);
    this.file = file;
  }

  parse(): GcfgDocument {
    for (;;) {
      this.skipBlanks();
      const c = this.peek();
      if (c === undefined) break;
      try {
        if (c === '\n') this.next();
        else if (c === ';' || c === '#') this.skipLine();
        else if (c === '[') this.header();
        else if (isLetter(c)) this.variable();
        else
          this.fail(
            `unexpected character ${JSON.stringify(c)} at the start of a line`,
            'start each line with a [Section] header, a key name, or ; or # for a comment',
          );
      } catch (err) {
        if (!(err instanceof LineError)) throw err;
        this.skipLine();
      }
    }
    if (this.problems.length > 0) throw new ConfigError(this.problems);
    return { file: this.file, sections: this.sections, source: { text: this.text, items: this.items } };
  }

  /** After the newline that ends the current line (a statement owns its whole line). */
  private endOfLine(): number {
    let i = this.pos;
    while (i < this.chars.length && this.chars[i] !== '\n') i++;
    return i < this.chars.length ? i + 1 : i;
  }

  private header(): void {
    const line = this.line;
    const start = this.lineStart;
    this.next(); // [
    this.skipBlanks();
    const rawName = this.name();
    if (!rawName) {
      this.fail(
        'expected a section name after "["',
        'write the header as [Global] or [LoadBalancerClass "name"]',
      );
    }
    this.skipBlanks();
    let subsection: string | undefined;
    if (this.peek() === '"') {
      subsection = this.quotedSubsection(rawName);
      this.skipBlanks();
    }
    if (this.peek() === '.') {
      this.fail(
        `the [${rawName}.sub] form is not supported`,
        `write the subsection in quotes: [${rawName} "sub"]`,
      );
    }
    if (this.peek() !== ']') {
      this.fail(
        `expected "]" to close the [${rawName} header`,
        subsection === undefined
          ? `write [${rawName}], or quote a subsection name: [${rawName} "name"]`
          : `write [${rawName} "${subsection}"]`,
      );
    }
    this.next(); // ]
    this.skipBlanks();
    if (!endsStatement(this.peek())) {
      this.fail('unexpected text after the section header', 'put nothing after "]" but a ; or # comment');
    }
    this.current = this.section(rawName, subsection, line);
    this.items.push({ kind: 'header', section: this.current, start, end: this.endOfLine() });
  }

  private quotedSubsection(section: string): string {
    this.next(); // "
    let out = '';
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === '\n') {
        this.fail(
          `the subsection name of [${section} is missing its closing quote`,
          `write [${section} "name"]`,
        );
      }
      this.next();
      if (c === '"') break;
      if (c === '\\') {
        const e = this.peek();
        const escaped = e === undefined ? undefined : ESCAPES[e];
        if (escaped === undefined) this.fail(`unknown escape sequence "\\${e ?? ''}"`, ESCAPE_FIX);
        this.next();
        out += escaped;
      } else {
        out += c;
      }
    }
    if (out === '') {
      this.fail(`empty subsection name in [${section} ""]`, `write [${section}] without quotes`);
    }
    return out;
  }

  private variable(): void {
    const line = this.line;
    const start = this.lineStart;
    const rawName = this.name();
    if (!this.current) {
      this.fail(
        `key "${rawName}" comes before any section header`,
        'put it under a section header such as [Global]',
        rawName,
      );
    }
    this.skipBlanks();
    const c = this.peek();
    if (endsStatement(c)) {
      const entry: GcfgEntry = { name: rawName.toLowerCase(), rawName, value: '', implicit: true, line };
      this.current.entries.push(entry);
      this.items.push({
        kind: 'entry',
        section: this.current,
        entry,
        start,
        end: this.endOfLine(),
        value: '',
        implicit: true,
        multiline: false,
      });
      return;
    }
    if (c !== '=') {
      const fix =
        c === '_' || c === '.'
          ? `key names hold only letters, digits and "-"; did you mean "${rawName}-${this.restOfName()}"?`
          : `write the line as ${rawName} = value`;
      this.fail(`expected "=" after the key "${rawName}"`, fix, rawName);
    }
    this.next(); // =
    const { value, start: valueStart, end: valueEnd } = this.value(rawName);
    const entry: GcfgEntry = { name: rawName.toLowerCase(), rawName, value, implicit: false, line };
    this.current.entries.push(entry);
    this.items.push({
      kind: 'entry',
      section: this.current,
      entry,
      start,
      end: this.endOfLine(),
      valueStart,
      valueEnd,
      value,
      implicit: false,
      multiline: this.line !== line,
    });
  }

  /**
   * Scans a value up to the end of the line or a comment, honouring quotes, escapes and `\`-newline
   * continuations. Blanks outside quotes at the end are dropped; blanks inside are kept.
   */
  private value(key: string): { value: string; start: number; end: number } {
    this.skipBlanks();
    const start = this.pos;
    let out = '';
    let kept = 0;
    /** Where the kept part of the value ends in the text. */
    let keptAt = start;
    let quoted = false;
    for (;;) {
      const c = this.peek();
      if (!quoted && endsStatement(c)) break;
      if (c === undefined || c === '\n') {
        this.fail(
          `the value of "${key}" is missing its closing double quote`,
          'close the quote on the same line; use \\n inside quotes for a line break',
          key,
        );
      }
      this.next();
      if (c === '\r') continue;
      if (c === '"') {
        quoted = !quoted;
        kept = out.length;
        keptAt = this.pos;
      } else if (c === '\\' && quoted) {
        const e = this.peek();
        const escaped = e === undefined ? undefined : ESCAPES[e];
        if (escaped === undefined) this.fail(`unknown escape sequence "\\${e ?? ''}"`, ESCAPE_FIX, key);
        this.next();
        out += escaped;
        kept = out.length;
        keptAt = this.pos;
      } else if (c === '\\') {
        if (this.peek() === '\r') this.next();
        if (this.peek() !== '\n') {
          this.fail(
            `a backslash outside double quotes must end the line (a continuation) in the value of "${key}"`,
            `put the value in double quotes and double each backslash, e.g. ${key} = "C:\\\\certs\\\\ca.pem"`,
            key,
          );
        }
        this.next(); // the newline: the value continues on the next line
        kept = out.length;
        keptAt = this.pos;
      } else {
        out += c;
        if (quoted || !isBlank(c)) {
          kept = out.length;
          keptAt = this.pos;
        }
      }
    }
    return { value: out.slice(0, kept), start, end: keptAt };
  }

  private section(rawName: string, subsection: string | undefined, line: number): GcfgSection {
    const name = rawName.toLowerCase();
    const existing = this.sections.find((s) => s.name === name && s.subsection === subsection);
    if (existing) return existing;
    const created: GcfgSection = { name, rawName, subsection, line, entries: [] };
    this.sections.push(created);
    return created;
  }

  private name(): string {
    if (!isLetter(this.peek())) return '';
    let out = '';
    while (isNameChar(this.peek())) out += this.next();
    return out;
  }

  /** The rest of a would-be key after an invalid character, for a "did you mean" with dashes. */
  private restOfName(): string {
    let out = '';
    for (let i = this.pos + 1; i < this.chars.length; i++) {
      const c = this.chars[i];
      if (c === '_' || c === '.') out += '-';
      else if (isNameChar(c)) out += c;
      else break;
    }
    return out;
  }

  private fail(problem: string, fix: string, key = ''): never {
    // Only names go into the message, never the text of the line: it may hold a password.
    this.problems.push({ file: `${this.file}:${this.line}`, key, value: undefined, problem, fix });
    throw new LineError(problem);
  }

  private peek(): string | undefined {
    return this.chars[this.pos];
  }

  private next(): string {
    const c = this.chars[this.pos++] ?? '';
    if (c === '\n') {
      this.line++;
      this.lineStart = this.pos;
    }
    return c;
  }

  private skipBlanks(): void {
    while (isBlank(this.peek())) this.pos++;
  }

  private skipLine(): void {
    while (this.peek() !== undefined && this.peek() !== '\n') this.pos++;
  }
}
