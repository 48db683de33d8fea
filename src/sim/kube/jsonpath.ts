/**
 * Kubernetes JSONPath (k8s.io/client-go/util/jsonpath), as the API server uses it for CRD printer
 * columns and selectable fields: templates of text and `{…}` actions; fields (with `\.` escapes),
 * `['key']`, `[n]`, slices, `[*]` and `.*`, unions `[a,b]`, recursive descent `..`, filters
 * `[?(@.x == "y")]` with `==`, `!=`, `<`, `>`, `<=`, `>=` or existence. Evaluation follows the Go
 * code's edges on purpose (an index out of range, a filter comparing unlike types or a filtered
 * non-list is an error, not an empty result), because the server turns any error into an empty
 * cell and users compare our tables with a real server's.
 */

export class JSONPathError extends Error {
  readonly template: string;
  constructor(template: string, message: string) {
    super(`JSONPath ${JSON.stringify(template)}: ${message}`);
    this.name = 'JSONPathError';
    this.template = template;
  }
}

interface SliceParam {
  known: boolean;
  value: number;
  derived: boolean;
}

type Node =
  | { t: 'list'; nodes: Node[] }
  | { t: 'text'; text: string }
  | { t: 'field'; name: string }
  | { t: 'wildcard' }
  | { t: 'recursive' }
  | { t: 'array'; params: [SliceParam, SliceParam, SliceParam] }
  | { t: 'union'; lists: ListNode[] }
  | { t: 'filter'; left: ListNode; right: ListNode; op: string }
  | { t: 'int'; value: number }
  | { t: 'float'; value: number }
  | { t: 'bool'; value: boolean }
  | { t: 'identifier'; name: string };

type ListNode = Extract<Node, { t: 'list' }>;

const TERMINATORS = new Set([' ', '\t', '\r', '\n', '.', ',', '[', ']', '$', '@', '{', '}']);
const SLICE = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/;
const DICT_KEY = /^'([^']*)'$/;
const FILTER = /^([^!<>=]+)([!<>=]+)(.+?)$/;

function isAlphaNumeric(c: string): boolean {
  return c === '_' || /^[\p{L}\p{Nd}]$/u.test(c);
}

/** A recursive-descent parser over one template, in the grammar of client-go's `parser.go`. */
class Parser {
  private pos = 0;
  private start = 0;
  readonly root: ListNode = { t: 'list', nodes: [] };
  private readonly input: string;
  private readonly template: string;

  constructor(input: string, template: string) {
    this.input = input;
    this.template = template;
  }

  private fail(message: string): never {
    throw new JSONPathError(this.template, message);
  }

  private consume(): string {
    const v = this.input.slice(this.start, this.pos);
    this.start = this.pos;
    return v;
  }

  /** The next character, or '' at the end. */
  private next(): string {
    if (this.pos >= this.input.length) return '';
    const c = String.fromCodePoint(this.input.codePointAt(this.pos) ?? 0);
    this.pos += c.length;
    return c;
  }

  private backup(c: string): void {
    this.pos -= c.length;
  }

  private peek(): string {
    const c = this.next();
    this.backup(c);
    return c;
  }

  parse(): ListNode {
    this.parseText();
    return this.root;
  }

  private parseText(): void {
    for (;;) {
      if (this.input.startsWith('{', this.pos)) {
        if (this.pos > this.start) this.root.nodes.push({ t: 'text', text: this.consume() });
        this.pos += 1;
        this.consume();
        const action: ListNode = { t: 'list', nodes: [] };
        this.root.nodes.push(action);
        this.parseInsideAction(action);
        return;
      }
      if (this.next() === '') break;
    }
    if (this.pos > this.start) this.root.nodes.push({ t: 'text', text: this.consume() });
  }

  private parseInsideAction(cur: ListNode): void {
    for (;;) {
      const rest = this.input.slice(this.pos);
      if (rest.startsWith('}')) {
        this.pos += 1;
        this.consume();
        this.parseText();
        return;
      }
      if (rest.startsWith('[?(')) {
        this.parseFilter(cur);
        continue;
      }
      if (rest.startsWith('..')) {
        this.parseRecursive(cur);
        continue;
      }
      const c = this.next();
      if (c === '' || c === '\r' || c === '\n') this.fail('unclosed action');
      if (c === ' ' || c === '@' || c === '$') this.consume();
      else if (c === '[') this.parseArray(cur);
      else if (c === '"' || c === "'") this.parseQuote(cur, c);
      else if (c === '.') this.parseField(cur);
      else if (c === '+' || c === '-' || /^\d$/.test(c)) {
        this.backup(c);
        this.parseNumber(cur);
      } else if (isAlphaNumeric(c)) {
        this.backup(c);
        this.parseIdentifier(cur);
      } else this.fail(`unrecognized character in action: ${JSON.stringify(c)}`);
    }
  }

  private parseIdentifier(cur: ListNode): void {
    for (;;) {
      const c = this.next();
      if (c === '' || TERMINATORS.has(c)) {
        this.backup(c);
        break;
      }
    }
    const v = this.consume();
    cur.nodes.push(
      v === 'true' || v === 'false' ? { t: 'bool', value: v === 'true' } : { t: 'identifier', name: v },
    );
  }

  private parseRecursive(cur: ListNode): void {
    if (cur.nodes.at(-1)?.t === 'recursive') this.fail('invalid multiple recursive descent');
    this.pos += 2;
    this.consume();
    cur.nodes.push({ t: 'recursive' });
    if (isAlphaNumeric(this.peek())) this.parseField(cur);
  }

  private parseNumber(cur: ListNode): void {
    const first = this.peek();
    if (first === '+' || first === '-') this.next();
    for (;;) {
      const c = this.next();
      if (c !== '.' && !/^\d$/.test(c)) {
        this.backup(c);
        break;
      }
    }
    const v = this.consume();
    if (/^[+-]?\d+$/.test(v)) cur.nodes.push({ t: 'int', value: Number(v) });
    else if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(v)) cur.nodes.push({ t: 'float', value: Number(v) });
    else this.fail(`cannot parse number ${v}`);
  }

  private parseArray(cur: ListNode): void {
    for (;;) {
      const c = this.next();
      if (c === '' || c === '\n') this.fail('unterminated array');
      if (c === ']') break;
    }
    let text = this.consume().slice(1, -1);
    if (text === '*') text = ':';
    const parts = text.split(',');
    if (parts.length > 1) {
      cur.nodes.push({ t: 'union', lists: parts.map((p) => this.sub(`[${p.trim()}]`)) });
      return;
    }
    const key = DICT_KEY.exec(text);
    if (key) {
      // client-go parses `['k']` as `.k`, so dots in k still split unless escaped.
      cur.nodes.push(...this.sub(`.${key[1] ?? ''}`).nodes);
      return;
    }
    const m = SLICE.exec(text);
    if (!m) this.fail(`invalid array index ${text}`);
    const params: [SliceParam, SliceParam, SliceParam] = [
      { known: false, value: 0, derived: false },
      { known: false, value: 0, derived: false },
      { known: false, value: 0, derived: false },
    ];
    for (let i = 0; i < 3; i++) {
      let v = m[i + 1] ?? '';
      const p = params[i] as SliceParam;
      if (v !== '') {
        if (i > 0) v = v.slice(1);
        if (i > 0 && v === '') continue;
        if (!/^-?\d+$/.test(v)) this.fail(`array index ${v} is not a number`);
        p.known = true;
        p.value = Number(v);
      } else if (i === 1) {
        p.known = true;
        p.value = params[0].value + 1;
        p.derived = true;
      }
    }
    cur.nodes.push({ t: 'array', params });
  }

  private parseFilter(cur: ListNode): void {
    this.pos += 3;
    this.consume();
    let begin = false;
    let end = false;
    let pair = '';
    for (;;) {
      const c = this.next();
      if (c === '' || c === '\n') this.fail('unterminated filter');
      if (c === '"' || c === "'") {
        if (!begin) {
          begin = true;
          pair = c;
          continue;
        }
        if (this.input[this.pos - 2] !== '\\' && c === pair) end = true;
      } else if (c === ')' && begin === end) break;
    }
    if (this.next() !== ']') this.fail('unclosed array expect ]');
    const text = this.consume().slice(0, -2);
    const m = FILTER.exec(text);
    if (!m) {
      cur.nodes.push({ t: 'filter', left: this.sub(text), right: { t: 'list', nodes: [] }, op: 'exists' });
      return;
    }
    cur.nodes.push({ t: 'filter', left: this.sub(m[1] ?? ''), right: this.sub(m[3] ?? ''), op: m[2] ?? '' });
  }

  private parseQuote(cur: ListNode, quote: string): void {
    for (;;) {
      const c = this.next();
      if (c === '' || c === '\n') this.fail('unterminated quoted string');
      if (c === quote && this.input[this.pos - 2] !== '\\') break;
    }
    cur.nodes.push({ t: 'text', text: unquote(this.consume(), this.template) });
  }

  private parseField(cur: ListNode): void {
    this.consume();
    for (;;) {
      const c = this.next();
      if (c === '\\') {
        this.next();
        continue;
      }
      if (c === '' || TERMINATORS.has(c)) {
        this.backup(c);
        break;
      }
    }
    const v = this.consume();
    cur.nodes.push(v === '*' ? { t: 'wildcard' } : { t: 'field', name: v.replaceAll('\\', '') });
  }

  /** Parses `text` as the inside of one action (unions, dict keys, filter operands). */
  private sub(text: string): ListNode {
    const p = new Parser(`{${text}}`, this.template);
    const action = p.parse().nodes[0];
    if (action?.t !== 'list') this.fail(`invalid expression ${text}`);
    return action;
  }
}

/** Go's `strconv.Unquote`, extended to single quotes, for the escapes JSONPath literals use. */
function unquote(s: string, template: string): string {
  const body = s.slice(1, -1);
  if (!body.includes('\\')) return body;
  const escapes: Record<string, string> = {
    n: '\n',
    t: '\t',
    r: '\r',
    '\\': '\\',
    "'": "'",
    '"': '"',
    a: '\x07',
    b: '\b',
    f: '\f',
    v: '\v',
  };
  return body.replace(/\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, (_m, e: string) => {
    if (e.length > 1) return String.fromCharCode(parseInt(e.slice(1), 16));
    const r = escapes[e];
    if (r === undefined) throw new JSONPathError(template, `unquote string ${s}: invalid syntax`);
    return r;
  });
}

/** A parsed template, evaluated many times. */
export interface JSONPath {
  readonly template: string;
  /** One result list per action or text node, as client-go's `FindResults`; throws JSONPathError. */
  findResults(data: unknown, opts?: { allowMissingKeys?: boolean }): unknown[][];
}

/** Parses a template such as `{.metadata.labels.app\.kubernetes\.io/name}`; throws JSONPathError. */
export function parseJSONPath(template: string): JSONPath {
  const root = new Parser(template, template).parse();
  return {
    template,
    findResults(data, opts = {}) {
      const ev = new Evaluator(template, opts.allowMissingKeys ?? false);
      return root.nodes.map((n) => ev.walk([data], n));
    },
  };
}

/**
 * The CRD printer-column and selectable-field form: `path` wrapped in braces, missing keys
 * allowed, and the first value of the first result, or undefined when there is none or the
 * evaluation fails (the server shows an empty cell then).
 */
export function columnPath(path: string): (obj: unknown) => unknown {
  let compiled: JSONPath;
  try {
    compiled = parseJSONPath(`{${path}}`);
  } catch {
    return () => undefined;
  }
  return (obj) => {
    try {
      const first = compiled.findResults(obj, { allowMissingKeys: true })[0];
      return first && first.length > 0 ? first[0] : undefined;
    } catch {
      return undefined;
    }
  };
}

type Kind = 'int' | 'float' | 'string' | 'bool' | 'other';

function kindOf(v: unknown): Kind {
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  return 'other';
}

class Evaluator {
  private readonly template: string;
  private readonly allowMissingKeys: boolean;

  constructor(template: string, allowMissingKeys: boolean) {
    this.template = template;
    this.allowMissingKeys = allowMissingKeys;
  }

  private fail(message: string): never {
    throw new JSONPathError(this.template, message);
  }

  walk(input: unknown[], node: Node): unknown[] {
    switch (node.t) {
      case 'list':
        return node.nodes.reduce<unknown[]>((cur, n) => this.walk(cur, n), input);
      case 'text':
        return [node.text];
      case 'field':
        return this.field(input, node.name);
      case 'array':
        return this.array(input, node.params);
      case 'filter':
        return this.filter(input, node);
      case 'int':
      case 'float':
        return input.map(() => node.value);
      case 'wildcard':
        return input.flatMap((v) => children(v) ?? []);
      case 'recursive':
        return this.recursive(input);
      case 'union':
        return node.lists.flatMap((l) => this.walk(input, l));
      case 'identifier':
        // `range`/`end` drive kubectl's own templates; nothing the API server evaluates uses them.
        return this.fail(`unrecognized identifier ${node.name}`);
      case 'bool':
        // client-go has no evaluation for a bare boolean either.
        return this.fail(`unexpected node ${String(node.value)}`);
    }
  }

  private field(input: unknown[], name: string): unknown[] {
    if (input.length === 0) return [];
    const out: unknown[] = [];
    for (const v of input) {
      if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.hasOwn(v, name))
        out.push((v as Record<string, unknown>)[name]);
    }
    if (out.length === 0 && !this.allowMissingKeys) this.fail(`${name} is not found`);
    return out;
  }

  private array(input: unknown[], params: [SliceParam, SliceParam, SliceParam]): unknown[] {
    const out: unknown[] = [];
    for (const v of input) {
      if (v === null || v === undefined) continue;
      if (!Array.isArray(v)) this.fail(`${goType(v)} is not array or slice`);
      const list = v as unknown[];
      const len = list.length;
      let start = params[0].known ? params[0].value : 0;
      if (start < 0) start += len;
      let end = params[1].known ? params[1].value : len;
      if (params[1].derived) end = start + 1;
      else if (end < 0) end += len;
      if (end !== start) {
        if (start >= len) this.fail(`array index out of bounds: index ${start}, length ${len}`);
        if (end > len) this.fail(`array index out of bounds: index ${end - 1}, length ${len}`);
      }
      if (start < 0 || end < start) this.fail(`slice bounds out of range [${start}:${end}]`);
      // The third value is Go's slice capacity, not a step: it bounds, it does not skip.
      if (params[2].known && (params[2].value < end || params[2].value > len))
        this.fail(`slice bounds out of range [::${params[2].value}] with capacity ${len}`);
      out.push(...list.slice(start, end));
    }
    return out;
  }

  private recursive(input: unknown[]): unknown[] {
    const out: unknown[] = [];
    for (const v of input) {
      const kids = children(v);
      if (kids && kids.length > 0) {
        out.push(v);
        out.push(...this.recursive(kids));
      }
    }
    return out;
  }

  private filter(input: unknown[], node: Extract<Node, { t: 'filter' }>): unknown[] {
    const out: unknown[] = [];
    for (const v of input) {
      if (!Array.isArray(v)) this.fail(`${goText(v)} is not array or slice and cannot be filtered`);
      for (const item of v) {
        if (node.op === 'exists') {
          if (this.exists(item, node.left)) out.push(item);
          continue;
        }
        const lefts = this.walk([item], node.left);
        if (lefts.length !== 1) this.fail('can only compare one element at a time');
        const rights = this.walk([item], node.right);
        if (rights.length !== 1) this.fail('can only compare one element at a time');
        if (this.compare(lefts[0], rights[0], node.op)) out.push(item);
      }
    }
    return out;
  }

  /** An existence filter ignores evaluation errors, as client-go does. */
  private exists(item: unknown, left: ListNode): boolean {
    try {
      return this.walk([item], left).length > 0;
    } catch {
      return false;
    }
  }

  /** Go template's eq/lt on basic kinds: unlike kinds, or order on non-ordered ones, are errors. */
  private compare(a: unknown, b: unknown, op: string): boolean {
    const ka = kindOf(a);
    const kb = kindOf(b);
    if (ka === 'other' || kb === 'other') this.fail('invalid type for comparison');
    if (ka !== kb) this.fail('incompatible types for comparison');
    const ordered = () => {
      if (ka === 'bool') this.fail('invalid type for comparison');
      return (a as number | string) < (b as number | string);
    };
    switch (op) {
      case '==':
        return a === b;
      case '!=':
        return a !== b;
      case '<':
        return ordered();
      case '>':
        return !ordered() && a !== b;
      case '<=':
        return ordered() || a === b;
      case '>=':
        return !ordered();
      default:
        return this.fail(`unrecognized filter operator ${op}`);
    }
  }
}

/** The members a wildcard or `..` visits: list items, map values, a string's bytes. */
function children(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v as unknown[];
  if (typeof v === 'string') return [...Buffer.from(v)];
  if (typeof v === 'object' && v !== null) return Object.values(v as Record<string, unknown>);
  return undefined;
}

function goType(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return 'map[string]interface {}';
}

/** Go's `%v` of an unstructured value: how the server prints a string column or a field label. */
export function goText(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : goFloat(v);
  if (Array.isArray(v)) return `[${v.map(goText).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    return `map[${keys.map((k) => `${k}:${goText(o[k])}`).join(' ')}]`;
  }
  return typeof v === 'bigint' ? v.toString() : '';
}

/** fmt's `%v` of a float64 (shortest `%g`): exponent form below 1e-4 and from 1e6 up. */
function goFloat(f: number): string {
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : f < 0 ? '-Inf' : 'NaN';
  const [mant = '', exp = '0'] = f.toExponential().split('e');
  const e = Number(exp);
  if (e < -4 || e >= 6) return `${mant}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return String(f);
}

/** The API server's output of one result list (`PrintResults`): values joined by a space. */
export function printResults(values: unknown[]): string {
  return values.map(goText).join(' ');
}

/**
 * The field names of a simple path (`.spec.replicas`, `.status.x\.y`), or undefined when it is
 * anything more; scale subresource paths must be of this form.
 */
export function simpleFieldPath(path: string): string[] | undefined {
  let root: ListNode;
  try {
    root = new Parser(`{${path}}`, path).parse();
  } catch {
    return undefined;
  }
  const action = root.nodes[0];
  if (root.nodes.length !== 1 || action?.t !== 'list' || action.nodes.length === 0) return undefined;
  const names: string[] = [];
  for (const n of action.nodes) {
    if (n.t !== 'field') return undefined;
    names.push(n.name);
  }
  return names;
}
