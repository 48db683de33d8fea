/**
 * Label and field selectors with the grammar of apimachinery's `labels.Parse` and
 * `fields.ParseSelector`: `=`, `==`, `!=`, `in`, `notin`, `exists`, `!exists` (and `>`/`<` on
 * integers) for labels; `=`, `==`, `!=` with `\`-escapes for fields.
 */
import { apiErrors } from './errors.ts';
import { asArray, asObj, asString, stringList } from './json.ts';

export type LabelOp = 'in' | 'notin' | 'exists' | '!' | '=' | '==' | '!=' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

export type LabelSelector = LabelRequirement[];

const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function parseError(message: string): never {
  throw apiErrors.badRequest(`unable to parse requirement: ${message}`);
}

function checkKey(key: string): void {
  const name = key.includes('/') ? key.slice(key.indexOf('/') + 1) : key;
  if (!QUALIFIED_NAME.test(key) || name.length > 63 || key.length - name.length - 1 > 253) {
    parseError(
      `key: Invalid value: ${JSON.stringify(key)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
  }
}

function checkValue(value: string, i: number): void {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    parseError(
      `values[${i}][${''}]: Invalid value: ${JSON.stringify(value)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    );
  }
}

/** A tiny lexer over the selector text, as `labels.Lexer` does it. */
class Lexer {
  pos = 0;
  readonly s: string;

  constructor(s: string) {
    this.s = s;
  }

  skipSpace(): void {
    while (this.pos < this.s.length && /\s/.test(this.s[this.pos] as string)) this.pos++;
  }

  peek(): string {
    this.skipSpace();
    return this.s[this.pos] ?? '';
  }

  /** An identifier: everything up to whitespace or a special character. */
  ident(): string {
    this.skipSpace();
    const start = this.pos;
    while (this.pos < this.s.length && !/[\s,()=!<>]/.test(this.s[this.pos] as string)) this.pos++;
    return this.s.slice(start, this.pos);
  }

  startsWith(t: string): boolean {
    this.skipSpace();
    return this.s.startsWith(t, this.pos);
  }

  eat(t: string): boolean {
    if (this.startsWith(t)) {
      this.pos += t.length;
      return true;
    }
    return false;
  }

  done(): boolean {
    this.skipSpace();
    return this.pos >= this.s.length;
  }
}

/** Parses a label selector string; throws 400 BadRequest like the real server on bad syntax. */
export function parseLabelSelector(text: string): LabelSelector {
  const out: LabelSelector = [];
  const lx = new Lexer(text);
  if (lx.done()) return out;
  // Bounded: every iteration consumes at least one requirement or throws.
  for (let guard = 0; guard <= text.length; guard++) {
    let op: LabelOp | undefined;
    if (lx.eat('!')) op = '!';
    const key = lx.ident();
    if (!key) parseError(`found '${lx.peek() || 'EOS'}', expected: identifier`);
    checkKey(key);
    let values: string[] = [];
    if (op === '!') {
      // `!key` takes nothing else.
    } else if (lx.done() || lx.peek() === ',') {
      op = 'exists';
    } else if (lx.eat('==')) {
      op = '==';
    } else if (lx.eat('!=')) {
      op = '!=';
    } else if (lx.eat('=')) {
      op = '=';
    } else if (lx.eat('>')) {
      op = 'gt';
    } else if (lx.eat('<')) {
      op = 'lt';
    } else {
      const word = lx.ident();
      if (word === 'in') op = 'in';
      else if (word === 'notin') op = 'notin';
      else parseError(`found '${word || lx.peek()}', expected: in, notin, =, ==, !=, gt, lt`);
    }
    if (op === '=' || op === '==' || op === '!=' || op === 'gt' || op === 'lt') {
      const v = lx.peek() === ',' || lx.done() ? '' : lx.ident();
      values = [v];
      if (op === 'gt' || op === 'lt') {
        if (!/^-?\d+$/.test(v)) parseError(`for 'Gt', 'Lt' operators, the value must be an integer`);
      } else checkValue(v, 0);
    } else if (op === 'in' || op === 'notin') {
      if (!lx.eat('(')) parseError(`found '${lx.peek() || 'EOS'}', expected: '('`);
      for (let g = 0; g <= text.length; g++) {
        if (lx.eat(')')) break;
        const v = lx.peek() === ',' || lx.peek() === ')' ? '' : lx.ident();
        values.push(v);
        if (lx.eat(',')) continue;
        if (lx.eat(')')) break;
        parseError(`found '${lx.peek() || 'EOS'}', expected: ',' or ')'`);
      }
      if (values.length === 0) parseError(`for 'in', 'notin' operators, values set can't be empty`);
      values.forEach((v, i) => checkValue(v, i));
    }
    out.push({ key, op: op ?? 'exists', values });
    if (lx.done()) return out;
    if (!lx.eat(',')) parseError(`found '${lx.peek()}', expected: ',' or 'end of string'`);
  }
  return out;
}

export function matchesLabels(sel: LabelSelector, labels: Record<string, string>): boolean {
  for (const r of sel) {
    const has = Object.hasOwn(labels, r.key);
    const v = labels[r.key];
    switch (r.op) {
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
      case '=':
      case '==':
      case 'in':
        if (!has || !r.values.includes(v as string)) return false;
        break;
      case '!=':
      case 'notin':
        if (has && r.values.includes(v as string)) return false;
        break;
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v as string)) return false;
        const n = Number(v);
        const bound = Number(r.values[0]);
        if (r.op === 'gt' ? !(n > bound) : !(n < bound)) return false;
        break;
      }
    }
  }
  return true;
}

/**
 * A `metav1.LabelSelector` object (`matchLabels` + `matchExpressions`) as requirements; used by
 * workload validation. An absent selector is `undefined` (matches nothing where one is required).
 */
export function fromLabelSelectorObject(sel: unknown): LabelSelector | undefined {
  const o = asObj(sel);
  if (!o) return undefined;
  const out: LabelSelector = [];
  for (const [k, v] of Object.entries(asObj(o.matchLabels) ?? {})) {
    out.push({ key: k, op: '=', values: [asString(v) ?? ''] });
  }
  for (const e of asArray(o.matchExpressions) ?? []) {
    const x = asObj(e);
    if (!x) continue;
    const key = asString(x.key) ?? '';
    const op = asString(x.operator);
    const values = stringList(x.values);
    if (op === 'In') out.push({ key, op: 'in', values });
    else if (op === 'NotIn') out.push({ key, op: 'notin', values });
    else if (op === 'Exists') out.push({ key, op: 'exists', values: [] });
    else if (op === 'DoesNotExist') out.push({ key, op: '!', values: [] });
  }
  return out;
}

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

/** Parses `a=b,c!=d` with `\,`, `\=` and `\\` escapes (fields.ParseSelector). */
export function parseFieldSelector(text: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  if (!text.trim()) return out;
  const terms: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && i + 1 < text.length) {
      cur += c + (text[i + 1] as string);
      i++;
    } else if (c === ',') {
      terms.push(cur);
      cur = '';
    } else cur += c;
  }
  terms.push(cur);
  for (const term of terms) {
    // The first unescaped operator splits the term; escapes are resolved afterwards.
    let at = -1;
    let opLen = 0;
    for (let i = 0; i < term.length; i++) {
      const c = term[i];
      if (c === '\\') {
        i++;
        continue;
      }
      if (c === '!' && term[i + 1] === '=') [at, opLen] = [i, 2];
      else if (c === '=') [at, opLen] = [i, term[i + 1] === '=' ? 2 : 1];
      if (at >= 0) break;
    }
    if (at < 0) throw apiErrors.badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    out.push({
      field: unescape(term.slice(0, at).trim()),
      op: term[at] === '!' ? '!=' : '=',
      value: unescape(term.slice(at + opLen)),
    });
  }
  return out;
}

function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

export function matchesFields(reqs: FieldRequirement[], fields: Record<string, string>): boolean {
  for (const r of reqs) {
    const v = fields[r.field] ?? '';
    if (r.op === '=' ? v !== r.value : v === r.value) return false;
  }
  return true;
}

/** Rejects selectors on fields the resource does not index, with the server's wording. */
export function checkFieldsSupported(reqs: FieldRequirement[], supported: ReadonlySet<string>): void {
  for (const r of reqs) {
    if (!supported.has(r.field)) throw apiErrors.badRequest(`field label not supported: ${r.field}`);
  }
}

/** The single name a field selector pins (`metadata.name=x`), used to short-cut list scans. */
export function pinnedName(reqs: FieldRequirement[]): string | undefined {
  return reqs.find((r) => r.field === 'metadata.name' && r.op === '=')?.value;
}
